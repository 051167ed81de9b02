// The service's own count of appends and of the flushes that carried them (fsyncs of the file log,
// produce requests to Kafka), read from /metrics before and after a run to take the difference.
export interface LogStats {
  readonly appends: number;
  readonly flushes: number;
}

export async function scrapeLogStats(url: string): Promise<LogStats> {
  const response = await fetch(`${url}/metrics`);
  if (response.status !== 200) throw new Error(`GET ${url}/metrics answered ${response.status}`);
  const text = await response.text();
  return { appends: counter(text, 'reports_log_appends_total'), flushes: counter(text, 'reports_log_flushes_total') };
}

export function statsBetween(before: LogStats, after: LogStats): LogStats {
  return { appends: after.appends - before.appends, flushes: after.flushes - before.flushes };
}

function counter(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  const value = Number(line?.slice(name.length + 1));
  if (line === undefined || !Number.isFinite(value)) throw new Error(`/metrics has no value for ${name}`);
  return value;
}
