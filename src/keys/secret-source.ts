// Fresh random bytes for content keys (their secrets, and the Kafka key store's key ids), drawn
// from the operating system's generator a pool at a time: one `randomBytes` call per key cost 5 %
// of a create's CPU under load on the file log, and on Kafka (a key id and a secret per create, each
// its own call) 31 µs of a create's 561 µs on Node 20, whose OpenSSL 3.0 makes every call dear;
// one call per pool costs nothing measurable. Every byte is still the system's randomness, handed
// out once, never derived from anything; the pool is overwritten as it is handed out, so no secret
// stays in it after its key is made.
import { randomBytes } from 'node:crypto';

const SECRETS_PER_DRAW = 512;
/** What one draw of `createRandomSource` takes: 512 secrets' worth. */
const POOL_BYTES = 32 * SECRETS_PER_DRAW;

/** A function that returns `size` new random bytes on every call (drawn alone when larger than the pool). */
export function createRandomSource(
  draw: (size: number) => Buffer = randomBytes,
  poolBytes = POOL_BYTES,
): (size: number) => Buffer {
  let pool: Buffer = Buffer.alloc(0);
  let at = 0;
  return (size) => {
    if (size > poolBytes) return draw(size);
    if (at + size > pool.length) {
      pool = draw(poolBytes);
      at = 0;
    }
    const bytes = Buffer.from(pool.subarray(at, at + size));
    pool.fill(0, at, at + size);
    at += size;
    return bytes;
  };
}

/** A function that returns a new `bytes`-byte random secret on every call. */
export function createSecretSource(bytes: number, draw: (size: number) => Buffer = randomBytes): () => Buffer {
  const source = createRandomSource(draw, bytes * SECRETS_PER_DRAW);
  return () => source(bytes);
}
