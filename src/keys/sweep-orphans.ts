// The keys a crash left behind, found and destroyed once a start has caught up. The order of writes
// makes orphans and nothing worse (key-store.ts): a key put whose create never reached the log, a
// deleted report or a void create whose key was not destroyed yet. A slot that fails its check and
// that no live report uses is destroyed too: a destroy torn by a power loss leaves such a slot, with
// what is left of the secret still in it. The file is read a chunk at a time and the referenced
// keys are a bit per slot, so a sweep of a million keys costs a few hundred KB and reads keys.db
// once, after the server is ready.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { keyIdOfSlot, slotOfKeyId, SLOT_BYTES, viewSlot } from './key-slots.js';
import type { KeyId } from './key-store.js';

/** Orphans destroyed by one durable write (one group commit). */
export const SWEEP_SLICE_KEYS = 256;
/** Slots read and looked at between two turns of the event loop. */
const LOOK_SLICE_SLOTS = 16_384;

export interface SweepOptions {
  /** Slots from this one on are not looked at (keys minted since the start: their creates may be in flight). */
  readonly below: number;
  /** Told the ids of each slice once its destruction is durable (a feed that showed their content may still hold it). */
  readonly onDestroyed?: (ids: readonly KeyId[]) => void;
}

export interface SweepResult {
  /** Live keys destroyed. */
  readonly live: number;
  /** Slots failing their check destroyed. */
  readonly damaged: number;
}

/** Keys of `referenced` taken between two turns of the event loop. */
const REFERENCED_SLICE_KEYS = 65_536;

/**
 * The slots below `below` that the keys of `referenced` name, a bit each; a slice at a time, so
 * the sweep of ten million reports' keys (a second and more) never holds a server's event loop long.
 */
export async function referencedSlots(referenced: Iterable<KeyId>, below: number): Promise<Uint8Array> {
  const bits = new Uint8Array(Math.ceil(below / 8));
  let taken = 0;
  for (const id of referenced) {
    const slot = slotOfKeyId(id);
    if (slot !== undefined && slot < below) bits[slot >> 3] = (bits[slot >> 3] as number) | (1 << (slot & 7));
    taken += 1;
    if (taken % REFERENCED_SLICE_KEYS === 0) await yieldToEventLoop();
  }
  return bits;
}

/**
 * Destroys, through `destroy`, every live or damaged slot below `below` that `referenced` does not
 * claim, reading the slots through `read(first, count)` a slice at a time.
 */
export async function sweepOrphanSlots(
  read: (first: number, count: number) => Promise<Buffer>,
  referenced: Uint8Array,
  below: number,
  destroy: (ids: KeyId[]) => Promise<void>,
): Promise<SweepResult> {
  let slice: KeyId[] = [];
  let live = 0;
  let damaged = 0;
  for (let first = 0; first < below; first += LOOK_SLICE_SLOTS) {
    const count = Math.min(LOOK_SLICE_SLOTS, below - first);
    const bytes = await read(first, count);
    for (let i = 0; i < count; i += 1) {
      const slot = first + i;
      if (((referenced[slot >> 3] as number) & (1 << (slot & 7))) !== 0) continue;
      const kind = viewSlot(bytes, i * SLOT_BYTES).kind;
      if (kind !== 'live' && kind !== 'damaged') continue;
      if (kind === 'live') live += 1;
      else damaged += 1;
      slice.push(keyIdOfSlot(slot));
      if (slice.length === SWEEP_SLICE_KEYS) {
        await destroy(slice);
        slice = [];
      }
    }
    await yieldToEventLoop();
  }
  if (slice.length > 0) await destroy(slice);
  return { live, damaged };
}
