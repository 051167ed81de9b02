// keys.db read by a tool beside the server (`reports replay`, `verify`, `snapshot`, `events`,
// `backup`): every key it holds now, without writing anything: no torn tail is cut (the server
// holding the file may be writing it), a damaged header refuses the read in one line naming the
// file, and keys.db absent reads as no key at all (a store written before erasure, whose events are
// all in the clear).
import { readKeyTable } from './key-tables.js';
import { NO_KEYS, type KeyLookup } from './key-store.js';

export async function readFileKeys(dir: string): Promise<KeyLookup> {
  return (await readKeyTable(dir)) ?? NO_KEYS;
}
