// Destroys content keys for the service: a deleted report's key before its 204, a void create's key
// before it is decided again. A destruction the store could not confirm in time fails the request
// (503: the delete took effect, its erasure is not confirmed) and is tried again in the background
// until the store confirms it, so an unreachable key store delays the erasure but never forgets it.
import type { Logger } from 'pino';
import type { KeyId, KeyStore } from '../keys/key-store.js';

const RETRY_MS = 1000;

export interface KeyEraser {
  /** Destroys the keys within `timeoutMs`; rejects if the store did not confirm (and keeps trying). */
  erase(ids: readonly KeyId[], timeoutMs: number): Promise<void>;
  /** Keys whose destruction is still being tried again. */
  pending(): number;
  /** Stops trying again (at shutdown: what is left is swept at the next start). */
  stop(): void;
}

export function createKeyEraser(keys: KeyStore, logger: Logger, retryMs = RETRY_MS): KeyEraser {
  const waiting = new Map<string, KeyId>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const retry = () => {
    timer = undefined;
    if (stopped || waiting.size === 0) return;
    const ids = [...waiting.values()];
    keys.destroy(ids).then(
      () => {
        for (const id of ids) waiting.delete(id.toString('hex'));
        logger.info({ keys: ids.length }, 'destroyed the keys whose destruction had failed before');
        schedule();
      },
      (error: unknown) => {
        logger.warn({ err: error, keys: ids.length }, 'the key store still does not confirm the destruction of keys; trying again');
        schedule();
      },
    );
  };
  const schedule = () => {
    if (timer === undefined && !stopped && waiting.size > 0) timer = setTimeout(retry, retryMs);
  };
  return {
    async erase(ids, timeoutMs) {
      if (ids.length === 0) return;
      try {
        await keys.destroy(ids, { timeoutMs });
      } catch (error) {
        for (const id of ids) waiting.set(id.toString('hex'), id);
        schedule();
        throw error;
      }
    },
    pending: () => waiting.size,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
