// An erasure with the names the eraser's bookkeeping keeps it under (key-eraser.ts), made once per
// erasure, and its split into one write per write group of the key store.
import type { Deletion } from '../keys/deletion-records.js';
import type { KeyId } from '../keys/key-store.js';

export interface Erasure {
  readonly ids: readonly KeyId[];
  readonly deletions: readonly Deletion[];
}

/** An erasure with its bookkeeping's names, made once (afresh at each look-up: `npm run bench:erase` 12-16 against 6-9 µs a delete). */
export interface NamedErasure extends Erasure {
  readonly idNames: readonly string[];
  readonly deletionNames: readonly string[];
  /** The keys the deletions end (destroyed with their record), and their names. */
  readonly endedKeys: readonly KeyId[];
  readonly endedKeyNames: readonly string[];
}

/** A key's name: its bytes, one character each (a flat string, cheap to make and to hash). */
const keyName = (id: KeyId) => id.toString('latin1');
const deletionName = ({ reportId, version }: Deletion) => `${reportId}/${version}`;
const NO_NAMES: readonly string[] = [];

export function named(ids: readonly KeyId[], deletions: readonly Deletion[]): NamedErasure {
  // A loop, not flatMap: flatMap took a third of this function's time.
  const endedKeys: KeyId[] = [];
  for (const { key } of deletions) if (key !== undefined) endedKeys.push(key);
  return {
    ids,
    deletions,
    idNames: ids.length === 0 ? NO_NAMES : ids.map(keyName),
    deletionNames: deletions.length === 0 ? NO_NAMES : deletions.map(deletionName),
    endedKeys,
    endedKeyNames: endedKeys.length === 0 ? NO_NAMES : endedKeys.map(keyName),
  };
}

/**
 * The erasure in one part per write group of the store (`KeyStore.writeGroupOf`: its keys; a
 * store's deletions go together), or whole for a store whose writes all go together.
 */
export function byWriteGroup(erasure: NamedErasure, groupOf: ((id: KeyId) => number) | undefined): NamedErasure[] {
  if (groupOf === undefined || erasure.ids.length < 2) return [erasure];
  const groups = new Map<number, KeyId[]>();
  for (const id of erasure.ids) {
    const group = groupOf(id);
    const ids = groups.get(group);
    if (ids === undefined) groups.set(group, [id]);
    else ids.push(id);
  }
  if (groups.size === 1) return [erasure];
  const parts = [...groups.values()].map((ids) => named(ids, []));
  if (erasure.deletions.length > 0) parts.push(named([], erasure.deletions));
  return parts;
}
