// The canonical form of the read model: the same reports give the same text whatever order the
// events were folded in (a file log and a Kafka topic with several partitions interleave
// differently), and whether their content was written in the clear or sealed. Hash it with
// SHA-256 to get the state digest `reports replay` prints:
//   createHash('sha256').update(canonicalState(state, digestOfSealed)).digest('hex')
// One line per live report, in id order: `["<id>","<hex>"]`, the hex being the SHA-256 of the
// report's content bytes (sealing.ts `contentDigest`). For sealed content that digest is kept in
// the key store beside the key (the writer took it from the content before sealing), so the state
// digest needs no key opened, and it is gone with the key; a sealed report whose key is not there
// (lost, or a foreign producer's) has the line `["<id>",null]`.
import { isSealedReport, type ReportContent, type SealedReport } from './reports.js';
import { contentDigest } from './sealing.js';

/** What the canonical form reads: the live reports (a Map of them will do). */
export interface LiveReports {
  get(id: string): ReportContent | undefined;
  keys(): Iterable<string>;
}

/** The content digest of a sealed report, from the key store; undefined when its key is not there. */
export type SealedDigest = (report: SealedReport) => Buffer | undefined;

/** Orders decimal int64 strings numerically without BigInt allocation per comparison. */
export function compareIds(a: string, b: string): number {
  const negativeA = a.startsWith('-');
  const negativeB = b.startsWith('-');
  if (negativeA !== negativeB) return negativeA ? -1 : 1;
  const magnitude = a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return negativeA ? -magnitude : magnitude;
}

/** A report's canonical line (with its newline). */
export function canonicalLine(id: string, digest: Buffer | undefined): string {
  return digest === undefined ? `["${id}",null]\n` : `["${id}","${digest.toString('hex')}"]\n`;
}

/** The canonical text of the live reports; `sealedDigest` reads the key store (none: every sealed line is null). */
export function canonicalState(state: LiveReports, sealedDigest: SealedDigest = () => undefined): string {
  const ids = [...state.keys()].sort(compareIds);
  let text = '';
  for (const id of ids) {
    const report = state.get(id) as ReportContent;
    text += canonicalLine(id, isSealedReport(report) ? sealedDigest(report) : contentDigest(report));
  }
  return text;
}
