// The ids a file key store gives out: slot numbers, taken in order and never given out twice, so a
// destroyed key's id never names another key. A key minted here is put at most once; one destroyed
// (or recorded as a deletion's) before its put can never be put.
import { slotOfKeyId } from './key-slots.js';
import { KeyNotMintedError } from './key-store-errors.js';
import { keyIdText, type ContentKey, type KeyId } from './key-store.js';
import type { SlotKey } from './slot-plan.js';

export class MintedSlots {
  /** Slots minted here and neither put nor destroyed: the only slots a put may fill. */
  private readonly unput = new Set<number>();

  constructor(
    /** The next slot to give out. */
    private next: number,
  ) {}

  /** A new slot for a key, to be put (or given up). */
  mint(): number {
    const slot = this.take();
    this.unput.add(slot);
    return slot;
  }

  /** A new slot that no key will ever fill (a deletion's record). */
  take(): number {
    return this.next++;
  }

  /** The slot `id` names, if this store gave it out. */
  slotOf(id: KeyId): number | undefined {
    const slot = slotOfKeyId(id);
    return slot !== undefined && slot < this.next ? slot : undefined;
  }

  /** Gives up the put of `slot`; whether it was minted and never put (its slot may lie past the file's end). */
  giveUp(slot: number): boolean {
    return this.unput.delete(slot);
  }

  /** The slots of `keys`, taken out of the minted ones (all or none): a key is put once at most. */
  takeForPut(keys: readonly ContentKey[], fits: (key: ContentKey) => boolean): SlotKey[] {
    const seen = new Set<number>();
    const taken = keys.map((key) => {
      const slot = slotOfKeyId(key.id);
      if (slot === undefined || !this.unput.has(slot) || seen.has(slot) || !fits(key))
        throw new KeyNotMintedError(keyIdText(key.id));
      seen.add(slot);
      return { slot, secret: key.secret, contentDigest: key.contentDigest };
    });
    for (const slot of seen) this.unput.delete(slot);
    return taken;
  }
}
