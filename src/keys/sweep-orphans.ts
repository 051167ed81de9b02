// The keys a crash left behind, found and destroyed at start. The order of writes makes orphans
// and nothing worse (key-store.ts): a key put whose create never reached the log, a deleted report
// or a void create whose key was not destroyed yet. A slot that fails its check and that no live
// report uses is destroyed too: a destroy torn by a power loss leaves such a slot, with what is left
// of the secret still in it.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { keyIdOfSlot } from './key-slots.js';
import type { KeyId } from './key-store.js';
import type { SlotTable } from './slot-table.js';

/** Orphans destroyed by one durable write (one group commit). */
export const SWEEP_SLICE_KEYS = 256;
/** Slots looked at between two turns of the event loop. */
const LOOK_SLICE_SLOTS = 16_384;

export interface SweepResult {
  /** Live keys destroyed. */
  readonly live: number;
  /** Slots failing their check destroyed. */
  readonly damaged: number;
}

/**
 * Destroys, through `destroy`, every live or damaged slot of `table` below `below` whose id
 * `isReferenced` does not claim, a slice at a time.
 */
export async function sweepOrphanSlots(
  table: SlotTable,
  isReferenced: (id: KeyId) => boolean,
  below: number,
  destroy: (ids: KeyId[]) => Promise<void>,
): Promise<SweepResult> {
  let slice: KeyId[] = [];
  let live = 0;
  let damaged = 0;
  for (let slot = 0; slot < Math.min(below, table.slots); slot += 1) {
    if (slot % LOOK_SLICE_SLOTS === LOOK_SLICE_SLOTS - 1) await yieldToEventLoop();
    const state = table.state(slot);
    if (state !== 'live' && state !== 'damaged') continue;
    const id = keyIdOfSlot(slot);
    if (isReferenced(id)) continue;
    if (state === 'live') live += 1;
    else damaged += 1;
    slice.push(id);
    if (slice.length === SWEEP_SLICE_KEYS) {
      await destroy(slice);
      slice = [];
    }
  }
  if (slice.length > 0) await destroy(slice);
  return { live, damaged };
}
