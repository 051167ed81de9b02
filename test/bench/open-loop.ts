// The fixed-rate load of `make bench`: an open-loop generator. autocannon's rate option is not one:
// each connection sends its quota for the second as fast as it can and then waits for the next
// second, so its "5,000 req/s" is a burst at saturation every second. Here request i is due at
// start + i/rate whatever happened to the earlier ones, and its latency is counted from that due
// time, not from when it went out: time spent waiting for one of the `connections` keep-alive
// sockets (all busy when the server falls behind) or for a late timer is the server's latency as a
// client at that rate sees it (no coordinated omission). The timer ticks every millisecond, so a
// request may leave up to about 1 ms after its due time; that millisecond is in the figures.
import { Agent, request } from 'node:http';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { reportBody, summarise, type LoadResult } from './load.js';

const REQUEST_TIMEOUT_MS = 30_000;

export interface PacedOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  readonly ratePerS: number;
  /** Sent as a bearer token when given. */
  readonly token?: string;
  /** The next unused id. */
  readonly nextId: () => number;
}

interface Tally {
  readonly latencyUs: RecordableHistogram;
  readonly statusCounts: Record<string, number>;
  errors: number;
}

interface Sender {
  readonly target: URL;
  readonly agent: Agent;
  readonly headers: Readonly<Record<string, string>>;
  readonly tally: Tally;
}

/** One POST, due at `dueMs`; `settled` runs once it is answered or has failed. */
function post({ target, agent, headers, tally }: Sender, body: string, dueMs: number, settled: () => void): void {
  const outgoing = request(target, { method: 'POST', agent, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } }, (response) => {
    response.resume();
    response.once('end', () => {
      tally.latencyUs.record(Math.max(1, Math.round((performance.now() - dueMs) * 1000)));
      const status = String(response.statusCode ?? 0);
      tally.statusCounts[status] = (tally.statusCounts[status] ?? 0) + 1;
      settled();
    });
  });
  outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy());
  outgoing.once('error', () => {
    tally.errors += 1;
    settled();
  });
  outgoing.end(body);
}

export async function runPaced({ url, connections, durationS, ratePerS, token, nextId }: PacedOptions): Promise<LoadResult> {
  const headers = { 'Content-Type': 'application/json', ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) };
  const sender: Sender = { target: new URL('/reports', url), agent: new Agent({ keepAlive: true, maxSockets: connections }), headers, tally: { latencyUs: createHistogram(), statusCounts: {}, errors: 0 } };
  const intervalMs = 1000 / ratePerS;
  const total = Math.max(1, Math.round(ratePerS * durationS));
  const startMs = performance.now();
  await new Promise<void>((allAnswered) => {
    let sent = 0;
    let outstanding = 0;
    const settled = () => {
      outstanding -= 1;
      if (sent === total && outstanding === 0) allAnswered();
    };
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - startMs) / intervalMs) + 1);
      for (; sent < due; sent += 1) {
        outstanding += 1;
        post(sender, reportBody(nextId()), startMs + sent * intervalMs, settled);
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  sender.agent.destroy();
  // Over the time until the last answer: a server that falls behind shows a rate below the offered one.
  const { latencyUs, statusCounts, errors } = sender.tally;
  return summarise(latencyUs, statusCounts, errors, (performance.now() - startMs) / 1000);
}
