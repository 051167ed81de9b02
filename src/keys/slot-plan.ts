// What one group commit of the key store writes, decided from the puts, destroys and erasures
// waiting together, in the order they arrived (pure). Puts take slots at the end of the file,
// written as one run; a put that arrives after a later-minted key's put went past its slot writes
// its reserved slot in place. A destroy rewrites its slot in place (or, when its put is in the same
// group, the secret never reaches the disk). An erasure writes its slot destroyed, with the record
// of a deletion when it carries one, wherever the slot is: in place, or at the end for a slot
// minted and never put (a deletion without a key, or a key given up before its put). Slots next to
// each other share one write.
import { SLOT_BYTES, SlotState, writeSlot, type RecordedDeletion, type SlotContent } from './key-slots.js';

/** A key to put, by slot, as put() checked it (minted here, never put, never destroyed). */
export interface SlotKey {
  readonly slot: number;
  readonly secret: Buffer;
  readonly contentDigest: Buffer;
}

/** A slot to write destroyed, with the deletion it records if any (its slot was minted here). */
export interface SlotErasure {
  readonly slot: number;
  readonly deletion?: RecordedDeletion;
}

export type KeyWrite =
  | { readonly kind: 'put'; readonly keys: readonly SlotKey[] }
  | { readonly kind: 'destroy'; readonly slots: readonly number[] }
  | { readonly kind: 'erase'; readonly slots: readonly SlotErasure[] };

/** Consecutive slots from `slot`, in one buffer: one write. */
export interface SlotRun {
  readonly slot: number;
  readonly bytes: Buffer;
}

export interface SlotWritePlan {
  readonly runs: readonly SlotRun[];
  /** The slot count once the runs are durable. */
  readonly end: number;
  readonly puts: number;
  /** Held slots this group destroys (each once, however often it was asked). */
  readonly destroyed: number;
  /** Deletions this group records. */
  readonly recorded: number;
}

const isKey = (content: SlotContent | undefined): boolean => typeof content === 'object' && 'secret' in content;
const isRecord = (content: SlotContent | undefined): boolean => typeof content === 'object' && 'deletion' in content;

/** The writes of `writes` on a file of `written` slots. */
export function planSlotWrites(writes: readonly KeyWrite[], written: number): SlotWritePlan {
  const contents = new Map<number, SlotContent>();
  let end = written;
  let puts = 0;
  const destroyed = new Set<number>();
  const recorded = new Set<number>();
  for (const write of writes) {
    if (write.kind === 'put') {
      for (const { slot, secret, contentDigest } of write.keys) {
        contents.set(slot, { secret, contentDigest });
        end = Math.max(end, slot + 1);
        puts += 1;
      }
    } else if (write.kind === 'destroy') {
      for (const slot of write.slots) {
        // A slot at or past the end holds no key yet (its put, if any, comes later and is refused).
        const held = slot < written || isKey(contents.get(slot));
        // A deletion's record stays: the key it names is destroyed already.
        if (!held || isRecord(contents.get(slot))) continue;
        contents.set(slot, SlotState.destroyed);
        destroyed.add(slot);
      }
    } else {
      for (const { slot, deletion } of write.slots) {
        if (slot < written || isKey(contents.get(slot))) destroyed.add(slot);
        if (deletion !== undefined) recorded.add(slot);
        contents.set(slot, deletion === undefined ? SlotState.destroyed : { deletion });
        end = Math.max(end, slot + 1);
      }
    }
  }
  for (let slot = written; slot < end; slot += 1) if (!contents.has(slot)) contents.set(slot, SlotState.reserved);
  return { runs: runsOf(contents), end, puts, destroyed: destroyed.size, recorded: recorded.size };
}

function runsOf(contents: ReadonlyMap<number, SlotContent>): SlotRun[] {
  const slots = [...contents.keys()].sort((a, b) => a - b);
  const runs: SlotRun[] = [];
  for (let first = 0; first < slots.length;) {
    let last = first;
    while (last + 1 < slots.length && (slots[last + 1] as number) === (slots[last] as number) + 1) last += 1;
    const start = slots[first] as number;
    const bytes = Buffer.allocUnsafe((last - first + 1) * SLOT_BYTES);
    for (let i = first; i <= last; i += 1)
      writeSlot(bytes, (i - first) * SLOT_BYTES, contents.get(slots[i] as number) as SlotContent);
    runs.push({ slot: start, bytes });
    first = last + 1;
  }
  return runs;
}
