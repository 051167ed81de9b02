// How long the service's appends waited for the log (for the file log: for the synchronized write
// that carried them) during a run, from the `reports_log_append_duration_seconds` histogram on its
// /metrics, read before and after. The tail bench prints it beside the latencies: a request is
// answered after its append is durable, so the share of appends that waited over a few
// milliseconds is a floor under the share of requests that took that long, whatever the service
// does around them.

const APPEND_HISTOGRAM = 'reports_log_append_duration_seconds';

/** Cumulative counts by upper bound in seconds (`le`), as Prometheus keeps them, and the total. */
export interface AppendWaits {
  readonly count: number;
  readonly atMost: ReadonlyMap<number, number>;
}

export async function scrapeAppendWaits(url: string): Promise<AppendWaits> {
  const response = await fetch(`${url}/metrics`);
  if (response.status !== 200) throw new Error(`GET ${url}/metrics answered ${response.status}`);
  return parseAppendWaits(await response.text());
}

/** The append histogram's buckets in a /metrics text (`+Inf` is the count). */
export function parseAppendWaits(text: string): AppendWaits {
  const atMost = new Map<number, number>();
  let count: number | undefined;
  const bucket = new RegExp(`^${APPEND_HISTOGRAM}_bucket\\{le="([^"]+)"\\} (\\S+)$`);
  for (const line of text.split('\n')) {
    const match = bucket.exec(line);
    if (match === null) continue;
    const value = Number(match[2]);
    if (match[1] === '+Inf') count = value;
    else atMost.set(Number(match[1]), value);
  }
  if (count === undefined) throw new Error(`/metrics has no ${APPEND_HISTOGRAM} histogram`);
  return { count, atMost };
}

/** The appends of the stretch between two readings. */
export function appendWaitsBetween(before: AppendWaits, after: AppendWaits): AppendWaits {
  const atMost = new Map([...after.atMost].map(([le, value]) => [le, value - (before.atMost.get(le) ?? 0)]));
  return { count: after.count - before.count, atMost };
}

/** The share (0..1) of the appends that waited longer than `seconds`, which must be one of the bucket bounds. */
export function shareOver(waits: AppendWaits, seconds: number): number {
  const within = waits.atMost.get(seconds);
  if (within === undefined) throw new Error(`the append histogram has no bucket at ${seconds} s`);
  return waits.count === 0 ? 0 : (waits.count - within) / waits.count;
}
