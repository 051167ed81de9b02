// Fresh random secrets for content keys, drawn from the operating system's generator a few hundred
// at a time: one `randomBytes` call per key cost 5 % of a create's CPU under load (a system call
// each), one per 512 keys costs nothing measurable. Every secret is still 32 bytes of the system's
// randomness used once, never derived from anything; the pool is overwritten as it is handed out,
// so no secret stays in it after its key is made.
import { randomBytes } from 'node:crypto';

const SECRETS_PER_DRAW = 512;

/** A function that returns a new `bytes`-byte random secret on every call. */
export function createSecretSource(bytes: number, draw: (size: number) => Buffer = randomBytes): () => Buffer {
  let pool: Buffer = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + bytes > pool.length) {
      pool = draw(bytes * SECRETS_PER_DRAW);
      at = 0;
    }
    const secret = Buffer.from(pool.subarray(at, at + bytes));
    pool.fill(0, at, at + bytes);
    at += bytes;
    return secret;
  };
}
