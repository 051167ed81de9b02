// The keys an instance holds in memory: id text -> a 64-byte slot (secret, then digest) in chunks of
// slots. A slot is zeroed the moment its key is destroyed and handed to the next key, so a
// destroyed secret does not wait in memory for a garbage collection that may never overwrite it.
// A Buffer per key cost about 240 bytes a key and one object per key for the collector; slots in
// chunks cost about 140 (docs/kafka.md, "Memory").
import { CONTENT_KEY_BYTES } from '../../projections/sealing.js';
import { KEY_MATERIAL_BYTES } from './key-record.js';
import { parseKeyId, type ContentKey } from './key-store.js';

const SLOTS_PER_CHUNK = 4096;

export class KeySlots {
  private readonly slotOf = new Map<string, number>();
  private readonly chunks: Buffer[] = [];
  private readonly free: number[] = [];
  private used = 0;

  get size(): number {
    return this.slotOf.size;
  }

  /** The ids held, as text. */
  ids(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  has(idText: string): boolean {
    return this.slotOf.has(idText);
  }

  /**
   * The ids held that `named` does not name: a bit per slot marks those it names, so a million keys
   * cost 125 KB of marks rather than a Set of their ids. Calls `slice` (a turn of the event loop)
   * every `every` names; the last pass, over the keys held, runs in one piece (tens of milliseconds
   * for a million). A key put while this marks is among those returned unless named.
   */
  async unnamed(named: Iterable<string>, slice: () => Promise<void>, every = 65_536): Promise<string[]> {
    let marks: Uint8Array = new Uint8Array(Math.ceil(this.used / 8) + 1);
    let taken = 0;
    for (const idText of named) {
      const slot = this.slotOf.get(idText);
      if (slot !== undefined) {
        if (slot >> 3 >= marks.length) marks = grown(marks, slot);
        marks[slot >> 3] = (marks[slot >> 3] as number) | (1 << (slot & 7));
      }
      if (++taken % every === 0) await slice();
    }
    const unnamed: string[] = [];
    for (const [idText, slot] of this.slotOf)
      if (((marks[slot >> 3] ?? 0) & (1 << (slot & 7))) === 0) unnamed.push(idText);
    return unnamed;
  }

  /** Keeps a copy of `material` (secret then digest) under `idText`, in place of what it held. */
  set(idText: string, material: Uint8Array): void {
    let slot = this.slotOf.get(idText);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.used++;
      this.slotOf.set(idText, slot);
    }
    const [chunk, at] = this.locate(slot);
    chunk.set(material.subarray(0, KEY_MATERIAL_BYTES), at);
  }

  /** Forgets the key: its slot is zeroed before it is freed. Whether it was held. */
  delete(idText: string): boolean {
    const slot = this.slotOf.get(idText);
    if (slot === undefined) return false;
    const [chunk, at] = this.locate(slot);
    chunk.fill(0, at, at + KEY_MATERIAL_BYTES);
    this.slotOf.delete(idText);
    this.free.push(slot);
    return true;
  }

  /** A copy of the key (the caller may keep it; destroying the key does not change it). */
  get(idText: string): ContentKey | undefined {
    const slot = this.slotOf.get(idText);
    if (slot === undefined) return undefined;
    const [chunk, at] = this.locate(slot);
    return {
      id: parseKeyId(idText),
      secret: Buffer.from(chunk.subarray(at, at + CONTENT_KEY_BYTES)),
      contentDigest: Buffer.from(chunk.subarray(at + CONTENT_KEY_BYTES, at + KEY_MATERIAL_BYTES)),
    };
  }

  /** Forgets every key, zeroing all slots (the store closed). */
  clear(): void {
    for (const chunk of this.chunks) chunk.fill(0);
    this.slotOf.clear();
    this.free.length = 0;
    this.used = 0;
  }

  /** The chunk of `slot` (made when it is the first slot of a new chunk) and where the slot starts in it. */
  private locate(slot: number): [Buffer, number] {
    const index = Math.floor(slot / SLOTS_PER_CHUNK);
    // Buffer.alloc, not allocUnsafe: a chunk never shares Node's pool with other buffers.
    const chunk = (this.chunks[index] ??= Buffer.alloc(SLOTS_PER_CHUNK * KEY_MATERIAL_BYTES));
    return [chunk, (slot % SLOTS_PER_CHUNK) * KEY_MATERIAL_BYTES];
  }
}

/** `marks` with room for `slot`'s bit. */
function grown(marks: Uint8Array, slot: number): Uint8Array {
  const wider = new Uint8Array(Math.max(marks.length * 2, (slot >> 3) + 1));
  wider.set(marks);
  return wider;
}
