// Every key of keys.db at one moment, in memory: the file's slots in one buffer, where a key's slot
// number is its offset. No Map per key: the state digest asks for the key of every live report, a
// million of them, and a Map of a million entries costs more than the 72 MB the slots take.
import type { FileHandle } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { readAt } from '../log/file/read-at.js';
import {
  HEADER_BYTES,
  copyLiveDigest,
  SLOT_BYTES,
  slotOfKeyId,
  slotOfKeyIdBytes,
  slotPosition,
  slotSound,
  viewSlot,
  type SlotView,
} from './key-slots.js';
import type { ContentKey, KeyId, KeyLookup } from './key-store.js';

/** Slots checked between two turns of the event loop (a CRC each: 15-30 ms of work on the development machine). */
const CHECK_SLICE_SLOTS = 65_536;
const READ_CHUNK_BYTES = 16 * 1024 * 1024;

export class SlotTable implements KeyLookup {
  private readonly damagedSet: ReadonlySet<number>;

  constructor(
    private readonly bytes: Buffer,
    /** Slots in the table: ids from 0 to this, less one. */
    readonly slots: number,
    /** Slots that fail their check (in increasing order). */
    readonly damaged: readonly number[],
  ) {
    this.damagedSet = new Set(damaged);
  }

  /** The key as the table holds it; its secret and digest are views into the table. */
  get(id: KeyId): ContentKey | undefined {
    const slot = slotOfKeyId(id);
    if (slot === undefined || slot >= this.slots) return undefined;
    const view = this.view(slot);
    return view.kind === 'live' ? { id, secret: view.secret, contentDigest: view.contentDigest } : undefined;
  }

  copyContentDigest(keyId: Uint8Array, start: number, end: number, into: Uint8Array): boolean {
    const slot = slotOfKeyIdBytes(keyId, start, end);
    if (slot === undefined || slot >= this.slots) return false;
    return copyLiveDigest(this.bytes, slot * SLOT_BYTES, this.damaged.length === 0 || !this.damagedSet.has(slot), into);
  }

  /**
   * Whether every key of `ids` was put (live or destroyed since), as FileKeyStore.wasPut answers
   * from the file, but for a damaged slot: read while a put was rewriting it, it is taken for not
   * put yet (`damagedIsPut: false`, a backup's check of the log's last batch).
   */
  wasPut(ids: readonly KeyId[], { damagedIsPut = true } = {}): boolean {
    return ids.every((id) => {
      const slot = slotOfKeyId(id);
      if (slot === undefined || slot >= this.slots) return false;
      const state = this.state(slot);
      return state !== 'reserved' && (damagedIsPut || state !== 'damaged');
    });
  }

  /** What slot `slot` (below `slots`) holds. */
  state(slot: number): SlotView['kind'] {
    return this.view(slot).kind;
  }

  /** What slot `slot` (below `slots`) holds; a live key's secret and digest are views into the table. */
  view(slot: number): SlotView {
    return viewSlot(this.bytes, slot * SLOT_BYTES, !this.damagedSet.has(slot));
  }
}

/**
 * Reads the first `slots` slots of the file and checks each. A slot that a write in flight was
 * rewriting as it was read may read as neither its old nor its new bytes: such a slot is read again
 * once `settled` (the write in flight is durable), and only a slot that fails again is damaged.
 */
export async function readSlotTable(
  handle: FileHandle,
  slots: number,
  settled: () => Promise<void>,
): Promise<SlotTable> {
  const bytes = Buffer.alloc(slots * SLOT_BYTES);
  for (let at = 0; at < bytes.length;) {
    const { bytesRead } = await handle.read(
      bytes,
      at,
      Math.min(READ_CHUNK_BYTES, bytes.length - at),
      HEADER_BYTES + at,
    );
    // A file shorter than its slots (cut under the store) leaves zeros: they fail their check.
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  let damaged = await unsoundSlots(bytes, slots);
  if (damaged.length > 0) {
    await settled();
    for (const slot of damaged) (await readAt(handle, slotPosition(slot), SLOT_BYTES)).copy(bytes, slot * SLOT_BYTES);
    damaged = damaged.filter((slot) => !slotSound(bytes, slot * SLOT_BYTES));
  }
  return new SlotTable(bytes, slots, damaged);
}

async function unsoundSlots(bytes: Buffer, slots: number): Promise<number[]> {
  const unsound: number[] = [];
  for (let slot = 0; slot < slots; slot += 1) {
    if (slot % CHECK_SLICE_SLOTS === CHECK_SLICE_SLOTS - 1) await yieldToEventLoop();
    if (!slotSound(bytes, slot * SLOT_BYTES)) unsound.push(slot);
  }
  return unsound;
}
