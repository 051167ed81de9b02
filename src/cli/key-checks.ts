// The check of sealed content that `reports verify` adds to those of the log (verify/log-checks.ts): every
// live report whose content is sealed has its key in the key store, the key opens its box, and the
// digest kept with the key is that of what it opens (the state digest reads it). A problem names
// the report and the key id, never the content.
import { isSealedReport, type ReportContent } from '../../projections/reports.js';
import { contentDigest, openContent } from '../../projections/sealing.js';
import { parseKeyId, type KeyLookup } from '../keys/key-store.js';
import type { Cursor, EventLog } from '../log/event-log.js';
import { readRecords } from '../log/record-batches.js';

export interface ContentFindings {
  /** Live reports whose content is sealed. */
  sealedReports: number;
  /** Those of them whose content cannot be opened: no key, or a key that does not open it. */
  unopenedReports: number;
  /** Live sealed reports left out: the log changed them after the fold (deleted, written again). */
  changedMeanwhile: number;
}

export type ContentProblem = (id: string, reason: string) => void;

/**
 * Checks the live reports of `reports` against `keys`, calling `problem` for each that fails; those
 * in `changed` are only counted (the state checked is no longer theirs).
 */
export function checkContentKeys(
  reports: Iterable<[string, ReportContent]>,
  keys: KeyLookup,
  problem: ContentProblem,
  changed: ReadonlySet<string> = new Set(),
): ContentFindings {
  const findings: ContentFindings = { sealedReports: 0, unopenedReports: 0, changedMeanwhile: 0 };
  for (const [id, report] of reports) {
    if (!isSealedReport(report)) continue;
    if (changed.has(id)) {
      findings.changedMeanwhile += 1;
      continue;
    }
    findings.sealedReports += 1;
    const keyId = report.sealed.key;
    const key = keys.get(parseKeyId(keyId));
    if (key === undefined) {
      findings.unopenedReports += 1;
      problem(
        id,
        `live report ${id}: its content key ${keyId} is not in the key store, so its name and tag cannot be read (a lost key, or another producer's event)`,
      );
      continue;
    }
    const content = openContent(report.sealed, key.secret, {
      id,
      ...(report.expectedversion === undefined ? {} : { expectedversion: report.expectedversion }),
    });
    if (content === undefined) {
      findings.unopenedReports += 1;
      problem(
        id,
        `live report ${id}: its content key ${keyId} does not open its content (damage, or a box copied from another event)`,
      );
    } else if (!contentDigest(content).equals(key.contentDigest)) {
      problem(
        id,
        `live report ${id}: the content digest kept with key ${keyId} is not that of the content it opens (the state digest would be wrong)`,
      );
    }
  }
  return findings;
}

/**
 * The reports the log's records from `from` on are about (a record's key is its report's id): those
 * a fold that ended at `from` no longer describes. A delete appends its event before it destroys
 * the key, so one whose key a lookup missed is among them when they are read after the lookup.
 */
export async function reportsChangedSince(
  log: Pick<EventLog, 'readBatches'>,
  from: Cursor,
  signal?: AbortSignal,
): Promise<Set<string>> {
  const changed = new Set<string>();
  for await (const { key } of readRecords(log, from, signal ? { signal } : {})) changed.add(key);
  return changed;
}
