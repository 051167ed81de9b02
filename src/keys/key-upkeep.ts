// What a server does with its key store besides sealing and erasing: at start, makes sure the key
// store holds the newest key the log refers to (keys.db cut short, lost or replaced stops the start,
// never reads as "every report erased"), and once the read model has caught up, destroys the keys
// that no live report uses: those a crash left behind (a key put whose create never reached the log,
// a deleted report's or a void create's key whose destruction the crash cut short).
import type { Logger } from 'pino';
import type { ReadModel } from '../read-model/read-model.js';
import { parseKeyId, type KeyId, type KeyStore } from './key-store.js';

/** A key store that knows which ids it ever held (the file store: ids are slot numbers). */
export interface HeldKeys {
  holds(id: KeyId): boolean;
  readonly description: string;
}

/** A key store that can sweep the keys no live report uses, below a bound. */
export interface SweptKeys {
  readonly slots: number;
  sweepOrphans(referenced: Iterable<KeyId>, options: { readonly below: number }): Promise<number>;
}

const holdsKeys = (keys: KeyStore): keys is KeyStore & HeldKeys =>
  typeof (keys as Partial<HeldKeys>).holds === 'function';
const sweepsKeys = (keys: KeyStore): keys is KeyStore & SweptKeys =>
  typeof (keys as Partial<SweptKeys>).sweepOrphans === 'function';

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

/** Destroys the keys below `below` that no live report of `model` uses; how many. */
export async function sweepOrphanKeys(
  model: ReadModel,
  keys: KeyStore,
  below: number,
  logger: Logger,
): Promise<number> {
  if (!sweepsKeys(keys)) return 0;
  const swept = await keys.sweepOrphans(model.reports.sealedKeyIds(), { below });
  logger.debug({ swept }, 'swept the key store');
  return swept;
}
