// Which partition a key's records go to: Kafka's default partitioner for keyed records (the Java
// client's, which kafkajs' DefaultPartitioner follows): murmur2 of the key's UTF-8 bytes, made
// positive, modulo the partition count. In 32-bit integer arithmetic (Math.imul) rather than
// kafkajs' 64-bit Long objects: it runs for every record written and every record read.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** The byte at `i` of the key, when every character is ASCII (one byte each, as ids are). */
type ByteAt = (i: number) => number;

function murmur2Of(length: number, byteAt: ByteAt): number {
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = byteAt(i) | (byteAt(i + 1) << 8) | (byteAt(i + 2) << 16) | (byteAt(i + 3) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= byteAt(whole + 2) << 16;
  if (rest >= 2) h ^= byteAt(whole + 1) << 8;
  if (rest >= 1) h = Math.imul(h ^ byteAt(whole), M);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  return h ^ (h >>> 15);
}

/** murmur2 (Kafka's variant, seed 0x9747b28c) of the UTF-8 bytes of `key`, as a signed 32-bit integer. */
export function murmur2(key: string): number {
  if (/^[\u0000-\u007f]*$/.test(key)) return murmur2Of(key.length, (i) => key.charCodeAt(i));
  const bytes = Buffer.from(key, 'utf8');
  return murmur2Of(bytes.length, (i) => bytes[i] as number);
}

/** The partition of `key` among `partitions`. */
export function partitionOfKey(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}
