// The record of deletions (docs/erasure.md, "Backups, restores and old history"): a key store that
// keeps one records every delete that took effect, by report id and the version the delete took
// the report to (never content), beside the destruction of the key that sealed its content. It is
// what `reports restore` re-applies to a backup taken before the delete: keys.db lives in the data
// directory, outside what a restore replaces, and is made durable on every delete anyway.
import { isSealedReport, type ReportContent } from '../../projections/reports.js';
import { parseKeyId, type KeyId, type KeyStore, type KeyWriteOptions } from './key-store.js';

/** A delete that took effect: the report, the version it took it to, and the key of the content it ended (none for content written in the clear). */
export interface Deletion {
  readonly reportId: string;
  readonly version: number;
  readonly key?: KeyId;
}

/** A deletion whose key may still be held, as a snapshot lists it: its key id as events carry it (base64url). */
export interface UnerasedDeletion {
  readonly reportId: string;
  readonly version: number;
  readonly key: string;
}

/** A key store that keeps a record of deletions (the file store: a deletion slot of keys.db). */
export interface DeletionRecords {
  /**
   * Destroys each deletion's key (if any) and records the deletion; resolves once durable. Shares
   * the group commit of the puts and destroys waiting with it.
   */
  recordDeletions(deletions: readonly Deletion[], options?: KeyWriteOptions): Promise<void>;
}

export function recordsDeletions(keys: KeyStore): keys is KeyStore & DeletionRecords {
  return typeof (keys as Partial<DeletionRecords>).recordDeletions === 'function';
}

/** The deletion made by a delete of report `id` decided on `expectedVersion` that took effect, ending `ended`. */
export function deletionOf(id: string, expectedVersion: number, ended: ReportContent | undefined): Deletion {
  const deletion = { reportId: id, version: expectedVersion + 1 };
  return ended !== undefined && isSealedReport(ended) ? { ...deletion, key: parseKeyId(ended.sealed.key) } : deletion;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** A record holds the version in 32 bits: a delete takes a report to at most 2^31 (expectedversion is a 32-bit Integer). */
const MAX_RECORDED_VERSION = 2 ** 32 - 1;

/** Throws RangeError unless `deletion` is one a record can hold: a canonical int64 id, a 32-bit version. */
export function checkDeletion({ reportId, version }: Deletion): void {
  const id = /^(0|-?[1-9][0-9]{0,18})$/.test(reportId) ? BigInt(reportId) : undefined;
  if (id === undefined || id < INT64_MIN || id > INT64_MAX)
    throw new RangeError(`a deletion names a report by its canonical int64 id, not "${reportId}"`);
  if (!Number.isInteger(version) || version < 0 || version > MAX_RECORDED_VERSION)
    throw new RangeError(`a deletion's version is an integer from 0 to ${MAX_RECORDED_VERSION}, not ${version}`);
}
