// The keys.db of a backup: exactly the keys of the reports live in its log, read from the data
// directory's keys.db right after the log's prefix was fixed, less those destroyed by the time it
// is read again at the end. Every other slot is written
// destroyed: the key of a report deleted within the prefix whose destruction had not reached
// keys.db yet (a backup taken after a delete must not hold its key), a void create's, and the keys
// put after the prefix (harmless, but a backup holds nothing it does not need). Deletion slots
// are kept as they are (ids and versions only): the backup's own record of deletions, which a
// restore into an empty data directory re-applies.
import { KEYS_FILE } from '../keys/key-file.js';
import { slotOfKeyId, SlotState } from '../keys/key-slots.js';
import { keyIdText, type KeyId } from '../keys/key-store.js';
import { writeKeyFile } from '../keys/key-tables.js';
import type { SlotTable } from '../keys/slot-table.js';
import type { ReportTable } from '../read-model/report-table.js';
import { join } from 'node:path';
import { BackupError } from './backup-manifest.js';

export interface BackupKeys {
  /** Slots in the backup's keys.db (those of the data directory's when it was read). */
  readonly slots: number;
  /** Live keys it holds: one per live sealed report of the backup. */
  readonly held: number;
}

/**
 * Writes `dir`/keys.db from `copied` (read with the log's prefix), holding the keys of `reports`
 * only, less those `latest` (keys.db read again at the end) no longer holds live: a report deleted
 * while the backup was being taken has no key in it, and a restore deletes it again. Deletion
 * slots of either are kept. Fsynced.
 */
export async function writeBackupKeys(
  dir: string,
  copied: SlotTable,
  latest: SlotTable,
  reports: ReportTable,
): Promise<BackupKeys> {
  const used = new Set<number>();
  for (const keyId of reports.sealedKeyIds()) {
    const slot = slotOfKeyId(keyId);
    if (slot !== undefined) used.add(slot);
  }
  const slots = Math.max(copied.slots, latest.slots);
  let held = 0;
  await writeKeyFile(join(dir, KEYS_FILE), slots, (slot) => {
    const view = slot < copied.slots ? copied.view(slot) : undefined;
    const now = slot < latest.slots ? latest.view(slot) : undefined;
    for (const each of [now, view])
      if (each?.kind === 'deletion') return { deletion: { reportId: each.reportId, version: each.version } };
    if (view?.kind !== 'live' || !used.has(slot) || now?.kind !== 'live') return SlotState.destroyed;
    held += 1;
    return { secret: view.secret, contentDigest: view.contentDigest };
  });
  return { slots, held };
}

/** Live sealed reports and no keys.db: such a backup could never be restored, no key opening their content. */
export function refuseKeylessSealedLog(keys: SlotTable | undefined, liveKeys: Iterable<KeyId>, dataDir: string): void {
  if (keys !== undefined) return;
  for (const key of liveKeys)
    throw new BackupError(
      `the log holds sealed content of live reports (one of their keys: ${keyIdText(key)}) but ${join(dataDir, KEYS_FILE)} is missing: a backup without it could not be restored, no key opening that content; nothing was written`,
    );
}
