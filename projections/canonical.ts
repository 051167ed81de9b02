// The canonical form of the read model: the same reports give the same text whatever order the
// events were folded in (a file log and a Kafka topic with several partitions interleave
// differently). Hash it with SHA-256 to get the state digest `reports replay` prints:
//   createHash('sha256').update(canonicalState(state)).digest('hex')
import type { StoredReport } from './reports.js';

/** What the canonical form reads: the live reports (a Map of them will do). */
export interface LiveReports {
  get(id: string): StoredReport | undefined;
  keys(): Iterable<string>;
}

/** Orders decimal int64 strings numerically without BigInt allocation per comparison. */
export function compareIds(a: string, b: string): number {
  const negativeA = a.startsWith('-');
  const negativeB = b.startsWith('-');
  if (negativeA !== negativeB) return negativeA ? -1 : 1;
  const magnitude = a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return negativeA ? -magnitude : magnitude;
}

/** One JSON array per report, `[id, name]` or `[id, name, tag]`, one per line, in id order. */
export function canonicalState(state: LiveReports): string {
  const ids = [...state.keys()].sort(compareIds);
  let text = '';
  for (const id of ids) {
    const report = state.get(id) as StoredReport;
    text += `${JSON.stringify(report.tag === undefined ? [id, report.name] : [id, report.name, report.tag])}\n`;
  }
  return text;
}
