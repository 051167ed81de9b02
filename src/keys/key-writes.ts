// What the key store writes to the key topic, as Kafka messages: keys (put), tombstones (destroy)
// and roll records (segment-rolls.ts). Writes waiting together go out in one produce request (group
// commit), split only where the topic's max.message.bytes would refuse a batch.
import type { Message, RecordMetadata } from 'kafkajs';
import type { ContentKey } from './key-store.js';
import { encodeKeyValue, ROLL_KEY } from './key-record.js';

export type KeyWrite =
  | { readonly kind: 'put'; readonly idTexts: readonly string[]; readonly values: readonly Buffer[] }
  | { readonly kind: 'destroy'; readonly idTexts: readonly string[] }
  | { readonly kind: 'roll'; readonly partitions: readonly number[] };

/** A put, its values encoded at once: a caller's buffers changing later change nothing written. */
export function putWrite(keys: readonly ContentKey[], idText: (key: ContentKey) => string): KeyWrite {
  return { kind: 'put', idTexts: keys.map(idText), values: keys.map(encodeKeyValue) };
}

/** One message of a write, with the partition it goes to. */
export interface KeyMessage extends Message {
  readonly partition: number;
}

/** The messages of `write`, in order. */
export function messagesOf(write: KeyWrite, partitionOf: (idText: string) => number, timestamp: string): KeyMessage[] {
  switch (write.kind) {
    case 'put':
      return write.idTexts.map((key, i) => ({ key, value: write.values[i] as Buffer, partition: partitionOf(key), timestamp }));
    case 'destroy':
      return write.idTexts.map((key) => ({ key, value: null, partition: partitionOf(key), timestamp }));
    case 'roll':
      return write.partitions.map((partition) => ({ key: ROLL_KEY, value: null, partition, timestamp }));
  }
}

/**
 * Bytes a key record may take in a batch at most: key (22), value (65), the record's framing with
 * varints at their widest, with room to spare. A batch also has a 61-byte header.
 */
const RECORD_BYTES_AT_MOST = 160;
const BATCH_HEADER_BYTES = 61;

/** Splits messages into produce requests whose batches fit under max.message.bytes (each partition's batch is bounded by it). */
export function requestsOf(messages: readonly KeyMessage[], maxMessageBytes: number): KeyMessage[][] {
  const perRequest = Math.max(1, Math.floor((maxMessageBytes - BATCH_HEADER_BYTES) / RECORD_BYTES_AT_MOST));
  const requests: KeyMessage[][] = [];
  for (let at = 0; at < messages.length; at += perRequest) requests.push(messages.slice(at, at + perRequest));
  return requests;
}

/**
 * The offset of each message of one produce request, from the broker's answer: a partition's
 * messages are one batch with consecutive offsets from its base offset, in the order sent. Where
 * the answer has none (-1: a retried batch the broker had already written), Infinity.
 */
export function offsetsOf(messages: readonly KeyMessage[], answer: readonly RecordMetadata[]): number[] {
  const next = new Map<number, number>();
  for (const entry of answer) {
    const base = Number(entry.baseOffset ?? entry.offset);
    next.set(entry.partition, Number.isSafeInteger(base) && base >= 0 ? base : Infinity);
  }
  return messages.map(({ partition }) => {
    const offset = next.get(partition) ?? Infinity;
    next.set(partition, offset + 1);
    return offset;
  });
}
