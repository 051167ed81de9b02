// The key store as the tools read it beside the servers (`reports replay`, `snapshot`, `verify`,
// `events`, and the source of `reports migrate`): every key held now, or one key as the store holds
// it now, never written. On the file log, keys.db read without its lock (read-file-keys.ts); on
// Kafka, the key topic followed for as long as the tool runs (kafka-tool-keys.ts).
import type { FileHandle } from 'node:fs/promises';
import type { ContentKey, KeyId, KeyLookup } from './key-store.js';
import { openKeysForReading, readFileKey, readFileKeys } from './read-file-keys.js';

export interface ToolKeys {
  /**
   * Every key the store holds now: keys.db read again, or the key topic read up to the heads of its
   * partitions as of this call. The lookup answers until `close`. Take it after the head of the log
   * it serves: a key is durable before its event is.
   */
  lookup(): Promise<KeyLookup>;
  /** One key as the store holds it now (for an event past the head a lookup was taken after). */
  get(id: KeyId): Promise<ContentKey | undefined>;
  close(): Promise<void>;
}

/** keys.db in `dir` (absent: no key, a store written before erasure, until a server creates it). */
export function fileToolKeys(dir: string): ToolKeys {
  let handle: FileHandle | undefined;
  let closed = false;
  return {
    lookup: () => readFileKeys(dir),
    async get(id) {
      handle ??= closed ? undefined : await openKeysForReading(dir);
      return handle === undefined ? undefined : readFileKey(handle, id);
    },
    async close() {
      closed = true;
      await handle?.close();
      handle = undefined;
    },
  };
}
