// A backup of the embedded log is a directory: `events.log` (a prefix of the log ending on a whole,
// durable batch), `keys.db` (format 2 on: the keys of the reports live in that prefix, and the
// record of deletions; backup-keys.ts), `snapshots/` (the newest snapshot usable for that prefix,
// if any) and this manifest, written last, once the copy has been checked. A directory without a
// manifest that matches its contents is not a backup, whatever else it holds. Format 1 (backups
// taken before keys.db was part of them) is still restored: its digest was taken without keys.
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { readRegularFile } from '../regular-file.js';
import { writeDurableFile } from './durable-files.js';

export const MANIFEST_NAME = 'backup.json';
export const BACKUP_FORMAT = 2;

const fields = {
  createdAt: Type.String(),
  /** `EventLog.identity` of the log backed up. */
  log: Type.String(),
  /** Records in the backup's log, and its length in bytes. */
  records: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 0 }),
  /** The state digest of the whole fold of the backup's log (`sha256:<hex>`), with the backup's keys (format 1: with none). */
  digest: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
  /** The snapshot file in `snapshots/`, or null. */
  snapshot: Type.Union([Type.String({ pattern: '^snapshot-\\d{16}\\.snap$' }), Type.Null()]),
};
const Manifest = Type.Union([
  Type.Object({ format: Type.Literal(1), ...fields }),
  Type.Object({
    format: Type.Literal(BACKUP_FORMAT),
    ...fields,
    /** The backup's keys.db: its slots and the live keys it holds; null when the data directory had none (a history all in the clear). */
    keys: Type.Union([
      Type.Object({ slots: Type.Integer({ minimum: 0 }), held: Type.Integer({ minimum: 0 }) }),
      Type.Null(),
    ]),
  }),
]);
export type BackupManifest = Static<typeof Manifest>;
const checkManifest = TypeCompiler.Compile(Manifest);

/** A directory is not a backup, or not one that checks out; the message says why. */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

export async function readManifest(dir: string): Promise<BackupManifest> {
  const bytes = await readRegularFile(join(dir, MANIFEST_NAME)).catch((error: NodeJS.ErrnoException) => {
    // A backup is private to the user who took it (0700): one taken as root cannot be read by the service's user.
    if (error.code === 'EACCES')
      throw new BackupError(
        `cannot read the backup ${dir} as user ${process.getuid?.() ?? '?'} (EACCES): a backup is readable by the user who took it alone; run this as that user, or give the backup to this one (chown -R)`,
      );
    throw new BackupError(
      `${dir} is not a backup: ${error.code === 'ENOENT' ? `it has no ${MANIFEST_NAME} (an interrupted backup never has one)` : error.message}`,
    );
  });
  const text = bytes.toString('utf8');
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new BackupError(`${join(dir, MANIFEST_NAME)} is not JSON`);
  }
  if (!checkManifest.Check(manifest))
    throw new BackupError(
      `${join(dir, MANIFEST_NAME)} has the wrong shape at ${checkManifest.Errors(manifest).First()?.path ?? '/'}`,
    );
  return manifest;
}

export function writeManifest(dir: string, manifest: BackupManifest): Promise<void> {
  return writeDurableFile(join(dir, MANIFEST_NAME), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
}
