// The load: POST /reports from autocannon in this process, every request with an id never sent
// before, so each one is a real create (an append) and never an idempotent retry.
import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  /** Sent as a bearer token when given. */
  readonly token?: string;
  /** The next unused id; shared between the warm-up and the measured run. */
  readonly nextId: () => number;
  /** A fixed arrival rate (requests per second over all connections) instead of as fast as possible. */
  readonly ratePerS?: number;
}

export interface LoadResult {
  readonly requestsPerSecondMean: number;
  readonly completed: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly durationS: number;
}

export function reportBody(id: number): string {
  return JSON.stringify({ id, name: `bench ${id}`, tag: 'bench' });
}

export async function runLoad({ url, connections, durationS, token, nextId, ratePerS }: LoadOptions): Promise<LoadResult> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
  // autocannon's own latency histogram has 1 ms resolution; this one has 1 µs.
  const latencyUs = createHistogram();
  const instance = autocannon({
    url: `${url}/reports`,
    connections,
    duration: durationS,
    // autocannon paces each connection to its share of the rate; a connection still waiting for an
    // answer sends its next request late, so with too few connections a slow server would lower the
    // load it gets (coordinated omission). 64 connections at 5,000 req/s leave each one 12.8 ms per
    // request, far above the p99 of every target below saturation; `achieved req/s` shows a shortfall.
    ...(ratePerS === undefined ? {} : { overallRate: ratePerS }),
    requests: [{ method: 'POST', path: '/reports', headers, setupRequest: (request) => ({ ...request, body: reportBody(nextId()) }) }],
  });
  instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
    latencyUs.record(Math.max(1, Math.round(responseTimeMs * 1000)));
  });
  const result = await instance;
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]));
  return {
    requestsPerSecondMean: result.requests.mean,
    completed: result.requests.total ?? 0,
    p50Ms: latencyUs.count === 0 ? Number.NaN : latencyUs.percentile(50) / 1000,
    p99Ms: latencyUs.count === 0 ? Number.NaN : latencyUs.percentile(99) / 1000,
    p999Ms: latencyUs.count === 0 ? Number.NaN : latencyUs.percentile(99.9) / 1000,
    non2xx: result.non2xx,
    errors: result.errors,
    statusCounts,
    durationS: result.duration,
  };
}
