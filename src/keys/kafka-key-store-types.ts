// What the Kafka key store (kafka-key-store.ts) offers beyond every key store: its options, its
// figures, and what it holds in memory.
import type { Logger } from 'pino';
import type { KafkaConfig } from '../config.js';
import type { KeyStore, KeyStoreStats } from './key-store.js';

export interface KafkaKeyStoreOptions {
  readonly config: KafkaConfig;
  readonly logger: Logger;
  /** Bounds each produce request (as the event log's: see produceTiming), and a get's or lookup's catch-up. */
  readonly writeTimeoutMs: number;
  /** Writes allowed to wait for a partition's next produce request (REPORTS_MAX_PENDING_APPENDS); one more is refused with LogOverloadedError. */
  readonly maxPendingWrites?: number;
  /** Random bytes: key ids and secrets, and this instance's spread of roll records. */
  readonly random?: (bytes: number) => Buffer;
  /** Create the key topic when it is missing (the server); a tool that only reads does not. */
  readonly createTopic?: boolean;
  /**
   * Where the event topic's first sealed create is (sealed-in-history.ts), asked only when the key
   * topic is missing: one there stops the start rather than create the key topic empty.
   */
  readonly firstSealed?: () => Promise<string | undefined>;
}

export interface KafkaKeyStoreStats extends KeyStoreStats {
  /** Keys held in memory. */
  readonly keys: number;
  /** Produce requests sent to the brokers (retries included). */
  readonly produceRequests: number;
  /** Roll records written (segment-rolls.ts). */
  readonly rollRecords: number;
}

export interface KafkaKeyStore extends KeyStore {
  stats(): KafkaKeyStoreStats;
  /** The ids of the keys held in memory now, as text. */
  heldIds(): IterableIterator<string>;
  /** How long after a destroy its secret may still be in the topic's files, by the topic's settings. */
  readonly erasureWithinMs: number;
}
