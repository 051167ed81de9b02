// The load at saturation: POST /reports from autocannon in this process, every request with an id
// never sent before, so each one is a real create (an append) and never an idempotent retry.
// (The fixed-rate load is open-loop.ts.)
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import autocannon, { type RequestParams } from 'autocannon';

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  /** Sent as a bearer token when given. */
  readonly token?: string;
  /** The next unused id; shared between the warm-up and the measured run. */
  readonly nextId: () => number;
  /** DELETE /reports/{id} instead of a create (each id once: stop after `amount` requests). */
  readonly method?: 'POST' | 'DELETE';
  /** Stop after this many requests rather than after `durationS`. */
  readonly amount?: number;
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

/** Every answer with its status, errors, and the latency histogram (µs) as a LoadResult. */
export function summarise(
  latencyUs: RecordableHistogram,
  statusCounts: Readonly<Record<string, number>>,
  errors: number,
  durationS: number,
): LoadResult {
  const completed = Object.values(statusCounts).reduce((sum, count) => sum + count, 0);
  const non2xx = Object.entries(statusCounts)
    .filter(([status]) => !status.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  const at = (percentile: number) => (latencyUs.count === 0 ? Number.NaN : latencyUs.percentile(percentile) / 1000);
  return {
    requestsPerSecondMean: completed / durationS,
    completed,
    p50Ms: at(50),
    p99Ms: at(99),
    p999Ms: at(99.9),
    non2xx,
    errors,
    statusCounts,
    durationS,
  };
}

export function reportBody(id: number): string {
  return JSON.stringify({ id, name: `bench ${id}`, tag: 'bench' });
}

export async function runLoad({
  url,
  connections,
  durationS,
  token,
  nextId,
  method = 'POST',
  amount,
}: LoadOptions): Promise<LoadResult> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
  // autocannon's own latency histogram has 1 ms resolution; this one has 1 µs.
  const latencyUs = createHistogram();
  const request =
    method === 'POST'
      ? {
          method,
          path: '/reports',
          headers,
          setupRequest: (sent: RequestParams) => ({ ...sent, body: reportBody(nextId()) }),
        }
      : {
          method,
          path: '/reports',
          headers,
          setupRequest: (sent: RequestParams) => ({ ...sent, path: `/reports/${nextId()}` }),
        };
  const instance = autocannon({
    url: `${url}/reports`,
    connections,
    ...(amount === undefined ? { duration: durationS } : { amount }),
    requests: [request],
  });
  instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
    latencyUs.record(Math.max(1, Math.round(responseTimeMs * 1000)));
  });
  const result = await instance;
  const statusCounts = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]),
  );
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
