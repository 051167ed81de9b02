// The fixed-rate load of `make bench`: an open-loop generator. autocannon's rate option is not one:
// each connection sends its quota for the second as fast as it can and then waits for the next
// second, so its "5,000 req/s" is a burst at saturation every second. Here request i is due at
// start + i/rate whatever happened to the earlier ones, and its latency is counted from that due
// time, not from when it went out: time spent waiting for one of the `connections` keep-alive
// sockets (all busy when the server falls behind) or for a late timer is the server's latency as a
// client at that rate sees it (no coordinated omission). The timer ticks every millisecond, so a
// request may leave up to about 1 ms after its due time; that millisecond is in the figures.
//
// It speaks HTTP/1.1 on plain sockets (http-client.ts) rather than through node:http's Agent:
// the load shares a 2-core machine with the server it measures, and node:http spent about 180 µs
// of CPU a request here (40 % of a core at 2,200 req/s) against about 60 µs for this client. That
// CPU was taken from the server under test, and showed in the tails of every target.
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { HttpConnection, type HttpAnswer } from './http-client.js';
import { reportBody, summarise, type LoadResult } from './load.js';

const REQUEST_TIMEOUT_MS = 30_000;
const RECONNECT_DELAY_MS = 100;

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

export async function runPaced({
  url,
  connections,
  durationS,
  ratePerS,
  token,
  nextId,
}: PacedOptions): Promise<LoadResult> {
  const target = new URL('/reports', url);
  const headers = {
    'Content-Type': 'application/json',
    ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
  };
  const tally: Tally = { latencyUs: createHistogram(), statusCounts: {}, errors: 0 };
  const intervalMs = 1000 / ratePerS;
  const total = Math.max(1, Math.round(ratePerS * durationS));
  // Free connections, least recently used first: each one is used in turn, so none sits idle
  // long enough to meet the server's keep-alive timeout (it would close it under a request).
  const idle: HttpConnection[] = [];
  /** Due times of requests waiting for a free connection, oldest first. */
  const waiting: number[] = [];
  const open = new Set<HttpConnection>();
  let sent = 0;
  let settledCount = 0;
  let allSettled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allSettled = resolve));
  let stopping = false;

  const settle = (dueMs: number, answer: HttpAnswer | Error) => {
    if (answer instanceof Error) tally.errors += 1;
    else {
      tally.latencyUs.record(Math.max(1, Math.round((performance.now() - dueMs) * 1000)));
      const status = String(answer.status);
      tally.statusCounts[status] = (tally.statusCounts[status] ?? 0) + 1;
    }
    settledCount += 1;
    if (settledCount === total) allSettled();
  };
  const send = (connection: HttpConnection, dueMs: number) => {
    connection.request('POST', target.pathname, headers, reportBody(nextId()), REQUEST_TIMEOUT_MS, (answer) => {
      settle(dueMs, answer);
      if (connection.usable) release(connection);
    });
  };
  const release = (connection: HttpConnection) => {
    const dueMs = waiting.shift();
    if (dueMs === undefined) idle.push(connection);
    else send(connection, dueMs);
  };
  const connect = async (): Promise<void> => {
    const connection = await HttpConnection.open(target, () => {
      // Closed (by the server, or after an error): a new connection takes its place.
      open.delete(connection);
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
      if (!stopping) void replace();
    });
    open.add(connection);
    if (stopping) connection.close();
    else release(connection);
  };
  const replace = async (): Promise<void> => {
    while (!stopping) {
      try {
        return await connect();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      }
    }
  };
  // Requests that found no connection for REQUEST_TIMEOUT_MS (the server stopped accepting) fail.
  const watchdog = setInterval(() => {
    const now = performance.now();
    while (waiting.length > 0 && (waiting[0] as number) + REQUEST_TIMEOUT_MS < now)
      settle(waiting.shift() as number, new Error('no connection'));
  }, 1000);

  try {
    await Promise.all(Array.from({ length: connections }, connect));
  } catch (error) {
    stopping = true;
    clearInterval(watchdog);
    for (const connection of open) connection.close();
    throw error;
  }
  const startMs = performance.now();
  const tick = () => {
    const due = Math.min(total, Math.floor((performance.now() - startMs) / intervalMs) + 1);
    for (; sent < due; sent += 1) {
      const dueMs = startMs + sent * intervalMs;
      const connection = idle.shift();
      if (connection === undefined) waiting.push(dueMs);
      else send(connection, dueMs);
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
  await finished;
  const elapsedS = (performance.now() - startMs) / 1000;
  stopping = true;
  clearInterval(watchdog);
  for (const connection of open) connection.close();
  // Over the time until the last answer: a server that falls behind shows a rate below the offered one.
  return summarise(tally.latencyUs, tally.statusCounts, tally.errors, elapsedS);
}
