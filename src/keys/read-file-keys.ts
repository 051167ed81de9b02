// keys.db read by a tool beside the server (`reports replay`, `verify`, `snapshot`, `events`,
// `backup`): every key it holds now, or one key at a time, without writing anything: no torn tail
// is cut (the server holding the file may be writing it), a damaged header refuses the read in one
// line naming the file, and keys.db absent reads as no key at all (a store written before erasure,
// whose events are all in the clear).
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { readAt } from '../log/file/read-at.js';
import { KeyStoreDamagedError } from './key-store-errors.js';
import { KEYS_FILE } from './key-file.js';
import { HEADER_BYTES, headerProblem, SLOT_BYTES, slotOfKeyId, slotPosition, viewSlot } from './key-slots.js';
import { readKeyTable } from './key-tables.js';
import { NO_KEYS, type ContentKey, type KeyId, type KeyLookup } from './key-store.js';

export async function readFileKeys(dir: string): Promise<KeyLookup> {
  return (await readKeyTable(dir)) ?? NO_KEYS;
}

/** keys.db of `dir` open for reading one key at a time, its header checked; undefined when there is none. */
export async function openKeysForReading(dir: string): Promise<FileHandle | undefined> {
  const path = join(dir, KEYS_FILE);
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (handle === undefined) return undefined;
  try {
    const problem = headerProblem(await readAt(handle, 0, HEADER_BYTES));
    if (problem !== undefined) throw new KeyStoreDamagedError(path, problem);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The key `id` as keys.db holds it now: undefined unless its slot is whole, sound and live. Read at
 * once, without a trip through libuv's thread pool: one slot of a file the page cache holds, for
 * `reports events`, which asks again for the key of each create it prints (event-keys.ts) and would
 * otherwise spend more on the trip than on the read.
 */
export function readFileKey(handle: FileHandle, id: KeyId): ContentKey | undefined {
  const slot = slotOfKeyId(id);
  if (slot === undefined) return undefined;
  const bytes = Buffer.alloc(SLOT_BYTES);
  const read = readSync(handle.fd, bytes, 0, SLOT_BYTES, slotPosition(slot));
  return keyOfSlotBytes(bytes.subarray(0, read), id);
}

function keyOfSlotBytes(bytes: Buffer, id: KeyId): ContentKey | undefined {
  const view = bytes.length === SLOT_BYTES ? viewSlot(bytes, 0) : undefined;
  return view?.kind === 'live'
    ? { id: Buffer.from(id), secret: view.secret, contentDigest: view.contentDigest }
    : undefined;
}

/**
 * Whether keys.db of `dir` holds every key of `ids` as put now (live, or destroyed since), as the
 * server's start tells it (FileKeyStore.wasPut): a slot past its end or reserved is not; a damaged
 * one is (written once: get and verify report the damage, and the server keeps its batch). No
 * keys.db: true, since nothing will come to wait for (a store without it is `reports verify`'s to report).
 */
export async function keysPutNow(dir: string, ids: readonly KeyId[]): Promise<boolean> {
  if (ids.length === 0) return true;
  const handle = await openKeysForReading(dir);
  if (handle === undefined) return true;
  try {
    const slots = ids.map((id) => slotOfKeyId(id));
    let [first, last] = [Number.POSITIVE_INFINITY, -1];
    for (const slot of slots) {
      if (slot === undefined) return false;
      [first, last] = [Math.min(first, slot), Math.max(last, slot)];
    }
    // Past the file's end is not put: the read below never asks for more than the file holds.
    if (slotPosition(last + 1) > (await handle.stat()).size) return false;
    const bytes = await readAt(handle, slotPosition(first), (last - first + 1) * SLOT_BYTES);
    return slots.every((slot) => {
      const at = ((slot as number) - first) * SLOT_BYTES;
      return at + SLOT_BYTES <= bytes.length && viewSlot(bytes, at).kind !== 'reserved';
    });
  } finally {
    await handle.close();
  }
}
