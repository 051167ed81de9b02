// Which live reports of a history a record of deletions says were deleted since (pure): what
// `reports restore` deletes again in a restored history, and what `reports backup` must not hold
// live (a report deleted while the backup was being taken). A sealed report is known by its key:
// deleted once its key is destroyed. A report written in the clear has no key: deleted when a
// delete is recorded that took its id to the version after its own (ids and versions only). Either
// way, also when the data directory's log, continuing the backup's history, took its id further
// (continued-history.ts).
import { isSealedReport, type ReportContent, type ReportsView } from '../../projections/reports.js';
import { parseKeyId, type KeyId } from '../keys/key-store.js';
import type { RecordedDeletions } from '../keys/recorded-deletions.js';
import type { ReportVersions } from './continued-history.js';

/** A live report the record says was deleted: its id, its version now (a delete of it is decided on that version), its key if sealed. */
export interface DeletedSince {
  readonly id: string;
  readonly version: number;
  readonly key?: KeyId;
}

export function deletedSince(
  reports: Iterable<[string, ReportContent]> & Pick<ReportsView, 'version'>,
  record: RecordedDeletions,
  continued?: ReportVersions,
): DeletedSince[] {
  const found: DeletedSince[] = [];
  for (const [id, report] of reports) {
    const version = reports.version(id);
    const endedSince = continued !== undefined && continued.version(id) > version;
    if (isSealedReport(report)) {
      const key = parseKeyId(report.sealed.key);
      if (endedSince || record.keyDestroyed(key)) found.push({ id, version, key });
    } else if (endedSince || record.deleted(id, version + 1)) {
      found.push({ id, version });
    }
  }
  return found;
}
