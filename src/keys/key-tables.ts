// keys.db as a whole, for the tools that copy or merge it rather than serve from it (`reports
// backup`, `reports restore`): read into one SlotTable without writing anything, and written anew
// as a file of its own (header, then every slot in order, synced) that a store then opens.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE } from '../data-dir/data-dir.js';
import { KEYS_FILE } from './key-file.js';
import { encodeHeader, HEADER_BYTES, headerProblem, SLOT_BYTES, writeSlot, type SlotContent } from './key-slots.js';
import { KeyStoreDamagedError } from './key-store-errors.js';
import { readSlotTable, type SlotTable } from './slot-table.js';

/** Slots encoded per write of a new file. */
const WRITE_CHUNK_SLOTS = 65_536;

/**
 * Every whole slot of `dir`'s keys.db as it is now (a slot being written beside is not whole yet,
 * and a torn tail is not cut); undefined when there is no keys.db (a store written before erasure).
 * A header this version does not read refuses the read in one line naming the file.
 */
export async function readKeyTable(dir: string): Promise<SlotTable | undefined> {
  const path = join(dir, KEYS_FILE);
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (handle === undefined) return undefined;
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(size, HEADER_BYTES));
    await handle.read(head, 0, head.length, 0);
    const problem = headerProblem(head);
    if (problem !== undefined) throw new KeyStoreDamagedError(path, problem);
    return await readSlotTable(handle, Math.floor((size - HEADER_BYTES) / SLOT_BYTES), () => Promise.resolve());
  } finally {
    await handle.close();
  }
}

/** Writes the new file `path` (0600): the header, then slots 0 to `slots` - 1 as `contentOf` says; fsynced (the caller syncs the directory). */
export async function writeKeyFile(
  path: string,
  slots: number,
  contentOf: (slot: number) => SlotContent,
): Promise<void> {
  const file = await open(path, 'wx', PRIVATE_FILE_MODE);
  try {
    await file.write(encodeHeader(), 0, HEADER_BYTES, 0);
    for (let first = 0; first < slots; first += WRITE_CHUNK_SLOTS) {
      const count = Math.min(WRITE_CHUNK_SLOTS, slots - first);
      const bytes = Buffer.allocUnsafe(count * SLOT_BYTES);
      for (let i = 0; i < count; i += 1) writeSlot(bytes, i * SLOT_BYTES, contentOf(first + i));
      await file.write(bytes, 0, bytes.length, HEADER_BYTES + first * SLOT_BYTES);
    }
    await file.sync();
  } finally {
    await file.close();
  }
}
