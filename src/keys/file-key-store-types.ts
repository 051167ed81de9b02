// What the embedded key store (file-key-store.ts) offers beyond every key store: its options, its
// figures, and the slot-level operations the start, the tools and the orphan sweep use.
import type { Logger } from 'pino';
import type { DeletionRecords } from './deletion-records.js';
import type { ContentKey, KeyId, KeyStore, KeyStoreStats } from './key-store.js';
import type { SlotTable } from './slot-table.js';
import type { SweepOptions } from './sweep-orphans.js';

export interface FileKeyStoreOptions {
  /** The data directory (the embedded log's, whose lock this process holds); the keys are `keys.db` in it. */
  readonly dir: string;
  readonly logger: Logger;
  /** Key writes allowed to wait for the next sync (as the log's REPORTS_MAX_PENDING_APPENDS). */
  readonly maxPending?: number;
  /** Create keys.db when it is missing (no event refers to a key yet); otherwise a missing file stops the open. */
  readonly create?: boolean;
}

export interface FileKeyStoreStats extends KeyStoreStats {
  /** Keys made durable since open. */
  readonly puts: number;
  /** Group commits, each one fdatasync. */
  readonly syncs: number;
  /** Reads (get, lookup) that met a slot failing its check. */
  readonly unreadable: number;
  /** Deletions recorded since open. */
  readonly deletions: number;
}

export interface FileKeyStore extends KeyStore, DeletionRecords {
  /** Slots minted and durable: every id below this is in the file (the next id minted is at least this). */
  readonly slots: number;
  /** Whether `id` names a slot in the file (live, destroyed or reserved): at start, the newest id the log names must. */
  holds(id: KeyId): boolean;
  /** The key `id` read from the file at once, synchronously (a start's check before the first write), or undefined. */
  getNow(id: KeyId): ContentKey | undefined;
  /** Every slot as it is now (keys, deletions, damage). */
  lookup(): Promise<SlotTable>;
  /**
   * Whether every key of `ids` was made durable (live now, or destroyed since): false when one's
   * slot lies beyond the file or is reserved, never written (a put a crash cut short).
   */
  wasPut(ids: readonly KeyId[]): Promise<boolean>;
  /** Checks every slot; returns the slot numbers that fail their check. */
  verify(): Promise<number[]>;
  /**
   * Destroys every live key below slot `below` that no live report uses (none of `referenced`), and
   * every slot below it failing its check that none uses; returns how many slots it destroyed.
   */
  sweepOrphans(referenced: Iterable<KeyId>, options: SweepOptions): Promise<number>;
  /**
   * After writes failed for want of space (space-watch.ts): cuts the file back to its durable slots
   * and takes writes again; true when it takes writes (or never stopped), false after any other failure.
   */
  resumeAfterFullDisk(): Promise<boolean>;
  stats(): FileKeyStoreStats;
}
