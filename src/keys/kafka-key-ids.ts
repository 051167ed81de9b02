// The key ids of the key topic say which of its partitions their records live in: 2 bytes of
// partition (big-endian), then 13 random bytes (104 bits: an id is never drawn twice in practice).
// A key is minted in the partition of the report it seals (the report id under the event topic's
// partitioner, key-partition.ts), so that writing it waits on the broker leading the report's event
// partition and on no other; and every later write of the id (its destroy, by the service, a sweep
// or a tool) finds that partition from the id alone. Ids of any other length (16 random bytes,
// minted before ids carried their partition) stay where Kafka's partitioner put them: the murmur2
// of their text.
import { partitionOfKey } from '../log/kafka/key-partition.js';
import type { KeyId } from './key-store.js';

const PARTITION_BYTES = 2;
const RANDOM_BYTES = 13;
/** Bytes of an id that carries its partition. */
export const PARTITIONED_ID_BYTES = PARTITION_BYTES + RANDOM_BYTES;
/** Its base64url text (15 bytes: 20 characters, no padding); the first 4 characters hold the partition's 2 bytes. */
const PARTITIONED_ID_CHARS = 20;
const PARTITION_CHARS = 4;
/** Partitions an id can name. */
export const MAX_KEY_PARTITIONS = 0x10000;

/** A new id whose records go to `partition`. */
export function mintKeyId(partition: number, random: (bytes: number) => Buffer): KeyId {
  if (!Number.isInteger(partition) || partition < 0 || partition >= MAX_KEY_PARTITIONS)
    throw new RangeError(`a key id names a partition from 0 to ${MAX_KEY_PARTITIONS - 1}, not ${partition}`);
  const id = Buffer.allocUnsafe(PARTITIONED_ID_BYTES);
  id.writeUInt16BE(partition, 0);
  random(RANDOM_BYTES).copy(id, PARTITION_BYTES);
  return id;
}

/** The partition of the key topic (of `partitions`) that holds the records of the id written as `idText` (canonical base64url). */
export function partitionOfKeyId(idText: string, partitions: number): number {
  if (idText.length !== PARTITIONED_ID_CHARS) return partitionOfKey(idText, partitions);
  // Modulo: never a partition the topic does not have (none of its ids names one).
  return Buffer.from(idText.slice(0, PARTITION_CHARS), 'base64url').readUInt16BE(0) % partitions;
}
