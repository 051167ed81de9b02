// What the key store writes to the key topic, as Kafka messages: keys (put), tombstones (destroy)
// and roll records (segment-rolls.ts), each to its partition. Writes waiting together for a
// partition go out in one produce request (group commit, key-lanes.ts), split only where the
// topic's max.message.bytes would refuse a batch.
import type { RecordMetadata } from 'kafkajs';
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

/** One message of a write, with the partition it goes to (stamped with its time when sent). */
export interface KeyMessage {
  readonly key: string;
  /** null: a tombstone. */
  readonly value: Buffer | null;
  readonly partition: number;
}

/** The messages of `write`, in order. */
export function messagesOf(write: KeyWrite, partitionOf: (idText: string) => number): KeyMessage[] {
  switch (write.kind) {
    case 'put':
      return write.idTexts.map((key, i) => ({ key, value: write.values[i] as Buffer, partition: partitionOf(key) }));
    case 'destroy':
      return write.idTexts.map((key) => ({ key, value: null, partition: partitionOf(key) }));
    case 'roll':
      return write.partitions.map((partition) => ({ key: ROLL_KEY, value: null, partition }));
  }
}

/**
 * Bytes a key record may take in a batch at most: key (22), value (65), the record's framing with
 * varints at their widest, with room to spare. A batch also has a 61-byte header.
 */
const RECORD_BYTES_AT_MOST = 160;
const BATCH_HEADER_BYTES = 61;

/** Splits one partition's messages into produce requests whose batches fit under max.message.bytes (it bounds a partition's batch). */
export function requestsOf(messages: readonly KeyMessage[], maxMessageBytes: number): KeyMessage[][] {
  const perRequest = Math.max(1, Math.floor((maxMessageBytes - BATCH_HEADER_BYTES) / RECORD_BYTES_AT_MOST));
  const requests: KeyMessage[][] = [];
  for (let at = 0; at < messages.length; at += perRequest) requests.push(messages.slice(at, at + perRequest));
  return requests;
}

/**
 * Per partition of one produce request, the offsets of its messages from the broker's answer: a
 * partition's messages are one batch with consecutive offsets from its base offset, in the order
 * sent. A partition the answer gives no offset for (missing, or -1) gets an error: nothing says its
 * keys were written, so its writes must not be acknowledged (kafkajs resolved sends it never made:
 * renewing-producer.ts).
 */
export function offsetsOf(
  byPartition: ReadonlyMap<number, readonly KeyMessage[]>,
  answer: readonly RecordMetadata[],
): Map<number, number[] | Error> {
  const offsets = new Map<number, number[] | Error>();
  for (const [partition, messages] of byPartition) {
    const entry = answer.find((candidate) => candidate.partition === partition);
    const base = Number(entry?.baseOffset ?? entry?.offset);
    offsets.set(
      partition,
      Number.isSafeInteger(base) && base >= 0 ? messages.map((_, i) => base + i) : new UnwrittenKeysError(partition),
    );
  }
  return offsets;
}

/** A key write whose produce answer gives no offset for a partition: taken as not written (503, safe to retry). */
export class UnwrittenKeysError extends Error {
  constructor(readonly partition: number) {
    super(
      `the key topic's answer gives no offset for partition ${partition}: the keys sent to it are not known to be written`,
    );
    this.name = 'UnwrittenKeysError';
  }
}
