// What a server does with its key store besides sealing and erasing: at start, makes sure the key
// store holds the newest key the log refers to (keys.db cut short, lost or replaced stops the start,
// never reads as "every report erased"), and once the read model has caught up, destroys the keys
// that no live report uses: those a crash left behind (a key put whose create never reached the log,
// a deleted report's or a void create's key whose destruction the crash cut short).
import type { Logger } from 'pino';
import type { Ended, ErasedKey, ReadModel } from '../read-model/read-model.js';
import type { SweepOptions } from './sweep-orphans.js';
import { parseKeyId, type KeyId, type KeyStore } from './key-store.js';

/** A key store that knows which ids it ever held (the file store: ids are slot numbers). */
export interface HeldKeys {
  holds(id: KeyId): boolean;
  readonly description: string;
}

/** A key store that can sweep the keys no live report uses, below a bound. */
export interface SweptKeys {
  readonly slots: number;
  sweepOrphans(referenced: Iterable<KeyId>, options: SweepOptions): Promise<number>;
}

/** A key store that holds every key it read in memory (the key topic's), and says at once whether it holds one. */
export interface KeysInMemory {
  heldInMemory(id: KeyId): boolean;
}

const holdsKeys = (keys: KeyStore): keys is KeyStore & HeldKeys =>
  typeof (keys as Partial<HeldKeys>).holds === 'function';
const sweepsKeys = (keys: KeyStore): keys is KeyStore & SweptKeys =>
  typeof (keys as Partial<SweptKeys>).sweepOrphans === 'function';
const keepsKeysInMemory = (keys: KeyStore): keys is KeyStore & KeysInMemory =>
  typeof (keys as Partial<KeysInMemory>).heldInMemory === 'function';

/** keys.db does not hold a key the log refers to: cut short, lost, or another store's. */
export class KeysNotHeldError extends Error {
  constructor(description: string, keyId: string) {
    super(
      `${description.replace(/^keys:/, '')} does not hold key ${keyId}, the newest the event log refers to: it was cut short, lost or replaced (restore it with its log from a backup); refusing to start rather than read reports' content as erased`,
    );
    this.name = 'KeysNotHeldError';
  }
}

/** Throws KeysNotHeldError when the key store never held the newest key the model's history refers to. */
export function checkNewestKeyHeld(model: ReadModel, keys: KeyStore): void {
  if (model.newestKey === undefined || !holdsKeys(keys)) return;
  if (!keys.holds(parseKeyId(model.newestKey))) throw new KeysNotHeldError(keys.description, model.newestKey);
}

/** The slot bound of a sweep: keys minted from now on are never swept (their creates may be in flight). */
export function sweepBound(keys: KeyStore): number | undefined {
  return sweepsKeys(keys) ? keys.slots : undefined;
}

/**
 * Destroys the keys below `below` that no live report of `model` uses; how many. `onDestroyed` hears
 * of each slice destroyed, as the eraser's listener does.
 */
export async function sweepOrphanKeys(
  model: ReadModel,
  keys: KeyStore,
  below: number,
  logger: Logger,
  onDestroyed?: (ids: readonly KeyId[]) => void,
): Promise<number> {
  if (!sweepsKeys(keys)) return 0;
  const swept = await keys.sweepOrphans(model.reports.sealedKeyIds(), {
    below,
    ...(onDestroyed ? { onDestroyed } : {}),
  });
  logger.debug({ swept }, 'swept the key store');
  return swept;
}

/** What a start's catch-up found a crash may have left unerased, collected as it folds and taken once. */
export interface LeftUnerased {
  /** The projector's `onEndedInCatchUp`. */
  readonly onEnded: ErasedKey;
  /** What was found since the last call, oldest first. */
  take(): Ended[];
}

/**
 * For a key store with no sweep (the key topic: several instances mint keys there, and a key no live
 * report uses may be a create's still in flight elsewhere, so it cannot be taken for an orphan), what
 * the start's catch-up folds that ends a key the store still holds: a delete or a void create whose
 * writer crashed before destroying its key, and no running instance folded since. Its key is used by
 * nothing any more, whoever wrote it; a delete still being erased by another instance is erased twice
 * (one more tombstone). Undefined for a store that sweeps (keys.db) or keeps no keys in memory.
 */
export function leftUnerased(keys: KeyStore): LeftUnerased | undefined {
  if (sweepsKeys(keys) || !keepsKeysInMemory(keys)) return undefined;
  let found: Ended[] = [];
  return {
    onEnded(ended) {
      if (ended.key === undefined) return;
      let id: KeyId;
      try {
        id = parseKeyId(ended.key);
      } catch {
        return; // Not a key id this store could ever hold.
      }
      if (keys.heldInMemory(id)) found.push(ended);
    },
    take() {
      const taken = found;
      found = [];
      return taken;
    },
  };
}
