// Opening keys.db: created on a first start (0600, its directory synced so the entry survives an
// OS crash), its header checked, a torn tail cut. The key store takes no lock of its own: it lives
// in the data directory whose lock (log/file/lock.ts) the embedded log of the same process holds.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ensurePrivateDir, PRIVATE_FILE_MODE, syncDir } from '../data-dir/data-dir.js';
import { readAt } from '../log/file/read-at.js';
import {
  encodeHeader,
  HEADER_BYTES,
  headerFormat,
  headerProblem,
  KEYS_FORMAT,
  SLOT_BYTES,
  slotIntact,
  slotPosition,
} from './key-slots.js';
import { KeyStoreDamagedError, KeyStoreMissingError } from './key-store-errors.js';
import { NotRegularFileError } from '../regular-file.js';

export const KEYS_FILE = 'keys.db';
/** Slots read at a time when looking for the last intact one from the end. */
const TAIL_CHUNK_SLOTS = 256;

export interface KeyFile {
  readonly path: string;
  /** Open for reading and writing (positional writes: never O_APPEND). */
  readonly handle: FileHandle;
  /** Slots in the file, every one whole: the next slot goes after them. */
  readonly slots: number;
}

export interface KeyFileOptions {
  readonly dir: string;
  readonly logger: Logger;
  /** Create the file when it is missing; otherwise a missing file stops the open. */
  readonly create: boolean;
}

export async function openKeyFile({ dir, logger, create }: KeyFileOptions): Promise<KeyFile> {
  const path = join(dir, KEYS_FILE);
  const handle = await openOrCreate(path, dir, create);
  try {
    return { path, handle, slots: await recover(handle, path, create, logger) };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function openOrCreate(path: string, dir: string, create: boolean): Promise<FileHandle> {
  try {
    return await open(path, constants.O_RDWR);
  } catch (error) {
    // A directory in its place is named as events.log's is (regular-file.ts), not a bare EISDIR.
    if ((error as NodeJS.ErrnoException).code === 'EISDIR') throw new NotRegularFileError(path, 'a directory');
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (!create) throw new KeyStoreMissingError(path);
  }
  await ensurePrivateDir(dir);
  const handle = await open(path, constants.O_RDWR | constants.O_CREAT, PRIVATE_FILE_MODE);
  // The file's entry must be durable before any key in it is acknowledged.
  await syncDir(dir);
  return handle;
}

/** Checks the header, cuts a torn tail, and returns the number of slots kept. */
async function recover(handle: FileHandle, path: string, create: boolean, logger: Logger): Promise<number> {
  const size = (await handle.stat()).size;
  if (size < HEADER_BYTES) {
    const header = encodeHeader();
    // Empty, or cut inside the header by a first start that crashed: no key was ever written.
    if (!create || !(await readAt(handle, 0, size)).equals(header.subarray(0, size))) {
      throw new KeyStoreDamagedError(path, `it holds ${size} bytes, less than a key store's header`);
    }
    await handle.write(header, 0, HEADER_BYTES, 0);
    await handle.datasync();
    return 0;
  }
  const head = await readAt(handle, 0, HEADER_BYTES);
  const problem = headerProblem(head);
  if (problem !== undefined) throw new KeyStoreDamagedError(path, problem);
  if (headerFormat(head) !== KEYS_FORMAT) {
    // Format 1 has no deletion slots; this version writes them, so the file says format 2 before
    // any is written, and a version that reads format 1 only refuses it rather than reading a
    // deletion's record as a damaged slot (and its sweep destroying the record). The header is
    // 16 bytes at the start of the first sector: one write.
    await handle.write(encodeHeader(), 0, HEADER_BYTES, 0);
    logger.info(
      { path, from: headerFormat(head), to: KEYS_FORMAT },
      "upgraded the key store's format (its slots are unchanged)",
    );
  }
  const whole = Math.floor((size - HEADER_BYTES) / SLOT_BYTES);
  const slots = await intactEnd(handle, whole);
  if (slotPosition(slots) < size) {
    // A put writes its slots at the end and is acknowledged only once they are durable: a part
    // slot, or slots failing their CRC with no intact one after them, are a put cut short by a
    // crash, never acknowledged, so no event names their ids. Damage before an intact slot is not
    // cut: that slot may be an acknowledged key (get and verify report the damage).
    logger.warn(
      { path, slot: slots, cutSlots: whole - slots, cutBytes: size - slotPosition(slots) },
      'cut a torn tail off the key store (key writes that were never acknowledged)',
    );
    await handle.truncate(slotPosition(slots));
  }
  // A writer killed between its writes and its sync leaves whole slots in the page cache only,
  // which the check kept: on disk before any new key is acknowledged beside them.
  await handle.datasync();
  return slots;
}

/** The number of slots up to and including the last intact one of the first `whole`. */
async function intactEnd(handle: FileHandle, whole: number): Promise<number> {
  for (let end = whole; end > 0;) {
    const first = Math.max(0, end - TAIL_CHUNK_SLOTS);
    const bytes = await readAt(handle, slotPosition(first), (end - first) * SLOT_BYTES);
    for (let slot = end - 1; slot >= first; slot -= 1)
      if (slotIntact(bytes, (slot - first) * SLOT_BYTES)) return slot + 1;
    end = first;
  }
  return 0;
}
