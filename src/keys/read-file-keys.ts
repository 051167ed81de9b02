// keys.db read by a tool beside the server (`reports replay`, `verify`, `snapshot`, `events`,
// `backup`): every key it holds now, without writing anything: no torn tail is cut (the server
// holding the file may be writing it), a damaged header refuses the read in one line naming the
// file, and keys.db absent reads as no key at all (a store written before erasure, whose events are
// all in the clear).
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyStoreDamagedError } from './key-store-errors.js';
import { KEYS_FILE } from './key-file.js';
import { HEADER_BYTES, headerProblem, SLOT_BYTES } from './key-slots.js';
import { NO_KEYS, type KeyLookup } from './key-store.js';
import { readSlotTable } from './slot-table.js';

export async function readFileKeys(dir: string): Promise<KeyLookup> {
  const path = join(dir, KEYS_FILE);
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (handle === undefined) return NO_KEYS;
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(size, HEADER_BYTES));
    await handle.read(head, 0, head.length, 0);
    const problem = headerProblem(head);
    if (problem !== undefined) throw new KeyStoreDamagedError(path, problem);
    // Whole slots only: a slot being written now is not a key yet.
    return await readSlotTable(handle, Math.floor((size - HEADER_BYTES) / SLOT_BYTES), () => Promise.resolve());
  } finally {
    await handle.close();
  }
}
