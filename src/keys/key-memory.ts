// What an instance holds of the key topic: every live key (memory-key-slots.ts), from two sources that
// can disagree for a moment. The follower reads the topic in order; this instance's own writes are
// applied as soon as they are acknowledged, so a put is readable and a destroyed key gone when the
// call returns. A destroy acknowledged before the follower has read up to its tombstone leaves a
// fence: the key's earlier record, read after, must not bring it back.
import type { Cursor, LogRecord } from '../log/event-log.js';
import { TopicSettingsError } from '../log/kafka/topic.js';
import { decodeKeyRecord, keyMaterial } from './key-record.js';
import { KeySlots } from './memory-key-slots.js';
import type { ContentKey } from './key-store.js';
import type { KeyWrite } from './key-writes.js';

/** What one record read by the follower was, for the caller's bookkeeping. */
export type AppliedRecord = 'key' | 'destroyed' | 'roll' | 'unreadable';

export class KeyMemory {
  private readonly slots = new KeySlots();
  private readonly fences = new Map<string, { readonly partition: number; readonly offset: number }>();

  constructor(
    /** The key topic, for errors. */
    private readonly topic: string,
    /** The partition of a key id's records. */
    private readonly partitionOf: (idText: string) => number,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  /** The ids of the keys held, as text. */
  ids(): IterableIterator<string> {
    return this.slots.ids();
  }

  get(idText: string): ContentKey | undefined {
    return this.slots.get(idText);
  }

  has(idText: string): boolean {
    return this.slots.has(idText);
  }

  /** The ids held now that `named` does not name (memory-key-slots.ts `unnamed`). */
  unnamed(named: Iterable<string>, slice: () => Promise<void>): Promise<string[]> {
    return this.slots.unnamed(named, slice);
  }

  /**
   * One record the follower read, in offset order. Throws TopicSettingsError for a key outside its
   * partition (the partition count changed, or another producer wrote it): a tombstone would never
   * reach its record.
   */
  apply(record: LogRecord): AppliedRecord {
    const { partition, offset } = record.position;
    const decoded = decodeKeyRecord(record.key, record.value);
    if (decoded.kind === 'roll' || decoded.kind === 'unreadable') return decoded.kind;
    const belongs = this.partitionOf(decoded.idText);
    if (belongs !== partition) {
      throw new TopicSettingsError(
        `key topic ${this.topic} has a key at partition ${partition} offset ${offset} that belongs in partition ${belongs}, ` +
          `where a tombstone would go, never reaching that record: either its partition count changed (restore it) ` +
          `or a producer other than this service wrote the record there (only the service may write to the key topic)`,
      );
    }
    const fence = this.fences.get(decoded.idText);
    if (decoded.kind === 'key') {
      if (fence === undefined || fence.offset <= offset) this.slots.set(decoded.idText, decoded.material);
    } else {
      this.slots.delete(decoded.idText);
      // A fence at an unknown offset (Infinity: an offset missing from `written`) is passed by the first tombstone of the id read.
      if (fence !== undefined && (fence.offset <= offset || fence.offset === Infinity))
        this.fences.delete(decoded.idText);
    }
    return decoded.kind;
  }

  /** Fences the follower has passed (`position`: its next offset per partition) are no longer needed. */
  passed(position: Cursor): void {
    for (const [idText, { partition, offset }] of this.fences)
      if ((position.get(partition) ?? 0) > offset) this.fences.delete(idText);
  }

  /** Acknowledged writes, with the offset of each of their messages in order (the lanes give every one), while the follower is at `position`. */
  written(writes: readonly KeyWrite[], offsets: readonly number[], position: Cursor): void {
    let at = 0;
    for (const write of writes) {
      switch (write.kind) {
        case 'put':
          write.idTexts.forEach((idText, i) => this.slots.set(idText, keyMaterial(write.values[i] as Buffer)));
          at += write.idTexts.length;
          break;
        case 'destroy':
          for (const idText of write.idTexts) this.forget(idText, offsets[at++] ?? Infinity, position);
          break;
        case 'roll':
          at += write.partitions.length;
          break;
      }
    }
  }

  /** Forgets every key, zeroing their bytes (the store closed). */
  clear(): void {
    this.slots.clear();
    this.fences.clear();
  }

  private forget(idText: string, tombstoneOffset: number, position: Cursor): void {
    this.slots.delete(idText);
    const partition = this.partitionOf(idText);
    if ((position.get(partition) ?? 0) <= tombstoneOffset)
      this.fences.set(idText, { partition, offset: tombstoneOffset });
  }
}
