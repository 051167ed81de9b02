// What a restore keeps of the log it replaces: `events.log.before-restore-<time>`, a second name of
// the same file, so an operator can still go back, only when no create in it holds content in the
// clear. Its sealed content opens only with keys.db of the data directory (no copy of the old
// keys.db is kept: it would hold the keys of reports deleted after the restore), so every later
// delete erases it there too. A log with creates written before erasure holds names and tags that
// no key erases (deleted reports' among them): it is not kept, and neither is one that cannot be
// read whole to tell.
import { link, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { syncDir } from '../data-dir/data-dir.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { LOG_FILE } from '../log/file/log-generation.js';
import { readRecords } from '../log/record-batches.js';
import { isPlainCreate } from '../history/plain-fates.js';

export type ReplacedLog = { readonly kept: string } | { readonly notKept: string } | undefined;

/** Keeps the data directory's log under a second name when it may be kept; undefined when there is none. */
export async function keepReplacedLog(dataDir: string, logger: Logger, now = new Date()): Promise<ReplacedLog> {
  const path = join(dataDir, LOG_FILE);
  if (
    !(await stat(path).then(
      () => true,
      () => false,
    ))
  )
    return undefined;
  let plain: boolean;
  try {
    plain = await holdsContentInTheClear(dataDir, logger);
  } catch (error) {
    return {
      notKept: `it could not be read whole to check it for content in the clear (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (plain)
    return {
      notKept:
        'it holds creates written in the clear, before erasure (run `reports seal-history` before a restore to keep the log it replaces)',
    };
  const kept = `${path}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
  await link(path, kept);
  await syncDir(dataDir);
  return { kept };
}

async function holdsContentInTheClear(dataDir: string, logger: Logger): Promise<boolean> {
  const log = await openFileLogReader({ dir: dataDir, logger });
  try {
    for await (const record of readRecords(log, new Map())) if (isPlainCreate(record.value)) return true;
    return false;
  } finally {
    await log.close();
  }
}
