// A key store that holds no key and confirms every write at once: what the eraser's tests, the key
// upkeep's tests and the erasure benchmark start from, each adding the members it watches.
import { NO_KEYS, type KeyStore } from '../../src/keys/key-store.js';

export function idleKeyStore(description: string): KeyStore {
  return {
    description,
    mint: () => {
      throw new Error(`${description}: mints no key`);
    },
    put: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
    get: () => Promise.resolve(undefined),
    lookup: () => Promise.resolve(NO_KEYS),
    stats: () => ({ erasures: 0 }),
    close: () => Promise.resolve(),
  };
}
