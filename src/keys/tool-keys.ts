// The key store as the tools read it beside the servers (`reports replay`, `snapshot`, `verify`,
// `events`, and the source of `reports migrate`): every key held now, read again when asked, never
// written. On the file log, keys.db read without its lock (read-file-keys.ts); on Kafka, the key
// topic followed for as long as the tool runs (kafka-tool-keys.ts).
import type { KeyLookup } from './key-store.js';
import { readFileKeys } from './read-file-keys.js';

export interface ToolKeys {
  /**
   * Every key the store holds now: keys.db read again, or the key topic read up to the heads of its
   * partitions as of this call. The lookup answers until `close`.
   */
  lookup(): Promise<KeyLookup>;
  close(): Promise<void>;
}

/** keys.db in `dir`, read again at every lookup (absent: no key, a store written before erasure). */
export function fileToolKeys(dir: string): ToolKeys {
  return { lookup: () => readFileKeys(dir), close: () => Promise.resolve() };
}
