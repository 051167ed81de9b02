// What `reports snapshot` lists as not erased (snapshot-format.ts `unerased`): the deletions its
// fold meets, and those the snapshot it started from listed, whose keys the key store still holds.
import type { UnerasedDeletion } from '../keys/deletion-records.js';
import { parseKeyId, type KeyLookup } from '../keys/key-store.js';
import type { Ended } from '../read-model/read-model.js';

function held(lookup: KeyLookup, key: string): boolean {
  try {
    return lookup.get(parseKeyId(key)) !== undefined;
  } catch {
    return false; // Not a key id any store could hold.
  }
}

export class UnerasedList {
  private readonly found: UnerasedDeletion[];

  /** `before`: the keys held before the fold (only a deletion whose key it holds is kept, so the list stays small). */
  constructor(
    private readonly before: KeyLookup,
    previous: { readonly unerased?: readonly UnerasedDeletion[] } | undefined,
  ) {
    this.found = [...(previous?.unerased ?? [])];
  }

  /** The fold's `onEnded`. */
  readonly onEnded = (ended: Ended): void => {
    if (ended.kind !== 'deleted' || ended.key === undefined || !held(this.before, ended.key)) return;
    this.found.push({ reportId: ended.reportId, version: ended.version, key: ended.key });
  };

  /** What `now` still holds the key of, once each. */
  stillHeld(now: KeyLookup): UnerasedDeletion[] {
    const seen = new Set<string>();
    return this.found.filter(({ key }) => {
      if (seen.has(key) || !held(now, key)) return false;
      seen.add(key);
      return true;
    });
  }
}
