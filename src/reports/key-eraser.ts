// Destroys content keys for the service: a deleted report's key before its 204, a void create's key
// before it is decided again. A destruction the store could not confirm in time fails the request
// (503: the delete took effect, its erasure is not confirmed) and is tried again in the background
// until the store confirms it, so an unreachable key store delays the erasure but never forgets it.
// The projector asks too (`eraseLater`), for every delete and void create it folds whoever wrote
// it: another instance's, or a write answered 503 that landed late, whose writer no longer waits.
// Keys destroyed lately are remembered, so a key this process has just destroyed is not asked for again.
import type { Logger } from 'pino';
import type { KeyId, KeyStore } from '../keys/key-store.js';

const RETRY_MS = 1000;
/** Keys asked for by the projector are destroyed together, this soon after the first. */
const LATER_MS = 10;
/** Keys destroyed lately, remembered so that the projector does not ask for them again. */
const RECENTLY_DESTROYED = 4096;

export interface KeyEraser {
  /** Destroys the keys within `timeoutMs`; rejects if the store did not confirm (and keeps trying). */
  erase(ids: readonly KeyId[], timeoutMs: number): Promise<void>;
  /** Destroys the key in the background (tried again until confirmed), unless it was destroyed lately here. */
  eraseLater(id: KeyId): void;
  /** Keys whose destruction is still being tried again. */
  pending(): number;
  /** Stops trying again (at shutdown: what is left is swept at the next start). */
  stop(): void;
}

export function createKeyEraser(keys: KeyStore, logger: Logger, retryMs = RETRY_MS): KeyEraser {
  const waiting = new Map<string, KeyId>();
  const recentlyDestroyed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const destroyed = (ids: readonly KeyId[]) => {
    for (const id of ids) {
      const hex = id.toString('hex');
      waiting.delete(hex);
      recentlyDestroyed.add(hex);
      if (recentlyDestroyed.size > RECENTLY_DESTROYED) recentlyDestroyed.delete(recentlyDestroyed.values().next().value as string);
    }
  };
  const retry = () => {
    timer = undefined;
    if (stopped || waiting.size === 0) return;
    const ids = [...waiting.values()];
    keys.destroy(ids).then(
      () => {
        destroyed(ids);
        logger.debug({ keys: ids.length }, 'destroyed keys in the background');
        schedule();
      },
      (error: unknown) => {
        logger.warn({ err: error, keys: ids.length }, 'the key store still does not confirm the destruction of keys; trying again');
        schedule();
      },
    );
  };
  const schedule = (delayMs = retryMs) => {
    if (timer === undefined && !stopped && waiting.size > 0) timer = setTimeout(retry, delayMs);
  };
  return {
    async erase(ids, timeoutMs) {
      if (ids.length === 0) return;
      try {
        await keys.destroy(ids, { timeoutMs });
        destroyed(ids);
      } catch (error) {
        for (const id of ids) waiting.set(id.toString('hex'), id);
        schedule();
        throw error;
      }
    },
    eraseLater(id) {
      const hex = id.toString('hex');
      if (recentlyDestroyed.has(hex) || waiting.has(hex)) return;
      waiting.set(hex, id);
      schedule(LATER_MS);
    },
    pending: () => waiting.size,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
