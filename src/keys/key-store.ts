// The second port to storage, beside the event log: where the keys that seal reports' names and
// tags live (projections/sealing.ts), a store that can really forget. Two adapters, as for the log:
// keys.db in the data directory, beside the embedded log (a key destroyed in place, overwritten and
// synced), and a compacted key topic beside Kafka's event topic (a key destroyed by a tombstone,
// physically removed within the bound the topic's settings give).
//
// The order of writes is the erasure's whole argument: a key is durable before the create that
// uses it is appended (a crash in between leaves an orphan key, harmless, swept later; never a
// report whose content cannot be opened), and a deleted report's key is destroyed durably before
// the delete is acknowledged.

/** A key's id: opaque bytes (at most 16), written in events as base64url. */
export type KeyId = Buffer;

/** The secret that seals one event's content, and the digest of that content (the state digest reads it). */
export interface ContentKey {
  readonly id: KeyId;
  /** AES-256 key: 32 random bytes, never derived from anything. */
  readonly secret: Buffer;
  /** SHA-256 of the content's bytes (sealing.ts `contentDigest`): forgotten with the key. */
  readonly contentDigest: Buffer;
}

export interface MintOptions {
  /**
   * What the content belongs to: the report id. A store that spreads its keys over partitions (the
   * key topic) mints the key in that report's partition, so that its writes wait on the broker that
   * the report's events wait on, and on no other. Without it, any partition.
   */
  readonly partitionKey?: string;
}

export interface KeyWriteOptions {
  /** Settles within this many milliseconds (AppendTimeoutError), as a log append does. */
  readonly timeoutMs?: number;
}

/** Every key a store held at one moment, in memory, for a pass over many (the state digest, a sweep). */
export interface KeyLookup {
  get(id: KeyId): ContentKey | undefined;
  /**
   * Copies `get(id)?.contentDigest` of the id `keyId[start, end)` into `into` (32 bytes), without
   * the rest of the key or a view made, where cheaper (the state digest asks it of every live
   * report); false when the key is not there.
   */
  copyContentDigest?(keyId: Uint8Array, start: number, end: number, into: Uint8Array): boolean;
}

export interface LookupOptions {
  /** Catch up with every key written anywhere before answering (default); false: answer from what is known here now. */
  readonly fresh?: boolean;
}

/** A lookup that holds no key: where no key store is at hand, every sealed report reads as keyless. */
export const NO_KEYS: KeyLookup = { get: () => undefined };

export interface KeyStoreStats {
  /** Keys destroyed since open (reports_erasures_total). */
  readonly erasures: number;
}

export interface KeyStore {
  /** A short description for logs and errors, e.g. `keys:/var/lib/reports/keys.db`. */
  readonly description: string;
  /**
   * A new key for one event's content: a fresh random secret under an id never used before in this
   * store. Nothing is written: `put` makes it durable.
   */
  mint(contentDigest: Buffer, options?: MintOptions): ContentKey;
  /** Makes the keys durable; resolves once they are (keys waiting together share one sync). */
  put(keys: readonly ContentKey[], options?: KeyWriteOptions): Promise<void>;
  /**
   * Destroys the keys durably (ids it does not hold are ignored); resolves once they are gone from
   * everything the store keeps, but for what the docs say it cannot promise (old blocks of a disk).
   */
  destroy(ids: readonly KeyId[], options?: KeyWriteOptions): Promise<void>;
  /** The key as the store holds it now; undefined when destroyed, never stored, or unreadable. */
  get(id: KeyId): Promise<ContentKey | undefined>;
  /** Every key held now (`fresh: false`: what this process has read of it so far, without asking further). */
  lookup(options?: LookupOptions): Promise<KeyLookup>;
  stats(): KeyStoreStats;
  close(): Promise<void>;
  /**
   * Which of the store's independent writers takes a key's writes (on Kafka its partition's lane):
   * a write to one never waits on another, so a destruction one cannot take now (a partition without
   * a leader) need not hold back the others. Without it, a store's writes go together.
   */
  writeGroupOf?(id: KeyId): number;
}

/** A key id as events carry it. */
export function keyIdText(id: KeyId): string {
  return id.toString('base64url');
}

/** The key id of an event's `data.sealed.key` (the schema's pattern checked it already). */
export function parseKeyId(text: string): KeyId {
  return Buffer.from(text, 'base64url');
}
