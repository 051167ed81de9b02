// The keys a file key store put or read lately, so that an identical retry of a recent create (or a
// keyed retry) opens its report without reading keys.db. One entry per slot number modulo the
// capacity, in one buffer: keys are minted in slot order, so the newest `capacity` puts are all
// there, and a key read from the file takes the entry of the put `capacity` slots before or after
// it. No object per key: a Map of keys held each one (an object and two buffers) for the next few
// thousand creates, long enough for the collector to move them to the old generation and collect
// them there (docs/performance.md). An entry is zeroed the moment its key's erasure is asked for.
import { DIGEST_BYTES, keyIdOfSlot, SECRET_BYTES } from './key-slots.js';
import type { ContentKey } from './key-store.js';

const ENTRY_BYTES = SECRET_BYTES + DIGEST_BYTES;
/** An entry that holds no key (slot numbers are never negative). */
const EMPTY = -1;

export class RecentKeys {
  /** The slot whose key each entry holds, or EMPTY. */
  private readonly slots: Float64Array;
  /** Each entry's secret, then its content digest. */
  private readonly bytes: Buffer;

  constructor(readonly capacity: number) {
    this.slots = new Float64Array(capacity).fill(EMPTY);
    this.bytes = Buffer.alloc(capacity * ENTRY_BYTES);
  }

  /** Keeps the key of `slot` (a copy of its bytes), in place of the entry's key before. */
  remember(slot: number, { secret, contentDigest }: ContentKey): void {
    const entry = slot % this.capacity;
    this.slots[entry] = slot;
    secret.copy(this.bytes, entry * ENTRY_BYTES, 0, SECRET_BYTES);
    contentDigest.copy(this.bytes, entry * ENTRY_BYTES + SECRET_BYTES, 0, DIGEST_BYTES);
  }

  /** The key of `slot` if it is kept: copies, which the entry's next key does not change. */
  get(slot: number): ContentKey | undefined {
    const entry = slot % this.capacity;
    if (this.slots[entry] !== slot) return undefined;
    const at = entry * ENTRY_BYTES;
    return {
      id: keyIdOfSlot(slot),
      secret: Buffer.from(this.bytes.subarray(at, at + SECRET_BYTES)),
      contentDigest: Buffer.from(this.bytes.subarray(at + SECRET_BYTES, at + ENTRY_BYTES)),
    };
  }

  /** Zeroes the entry of `slot` if it holds that key. */
  forget(slot: number): void {
    const entry = slot % this.capacity;
    if (this.slots[entry] !== slot) return;
    this.slots[entry] = EMPTY;
    this.bytes.fill(0, entry * ENTRY_BYTES, (entry + 1) * ENTRY_BYTES);
  }
}
