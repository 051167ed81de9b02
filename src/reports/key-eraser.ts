// Destroys content keys for the service: a deleted report's key before its 204 (and, where the key
// store keeps a record of deletions, the record of the delete with it: a report written in the
// clear has no key, but its deletion is recorded all the same), a void create's key before it is
// decided again. A destruction the store could not confirm in time fails the request (503: the
// delete took effect, its erasure is not confirmed) and is tried again in the background until the
// store confirms it, so an unreachable key store delays the erasure but never forgets it.
import type { Logger } from 'pino';
import { recordsDeletions, type Deletion } from '../keys/deletion-records.js';
import type { KeyId, KeyStore, KeyWriteOptions } from '../keys/key-store.js';

const RETRY_MS = 1000;

export interface KeyEraser {
  /**
   * Destroys the keys, or erases what a delete that took effect ends (its key, and its record),
   * within `timeoutMs`; rejects if the store did not confirm (and keeps trying).
   */
  erase(what: readonly KeyId[] | Deletion, timeoutMs: number): Promise<void>;
  /** Keys (and deletions) whose erasure is still being tried again. */
  pending(): number;
  /** Stops trying again (at shutdown: what is left is swept at the next start). */
  stop(): void;
}

interface Erasure {
  readonly ids: readonly KeyId[];
  readonly deletions: readonly Deletion[];
}

export function createKeyEraser(keys: KeyStore, logger: Logger, retryMs = RETRY_MS): KeyEraser {
  const waitingKeys = new Map<string, KeyId>();
  const waitingDeletions = new Map<string, Deletion>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // A store without a record of deletions is asked for the key's destruction only.
  const erasureOf = (what: readonly KeyId[] | Deletion): Erasure => {
    if (Array.isArray(what)) return { ids: what as readonly KeyId[], deletions: [] };
    const deletion = what as Deletion;
    if (recordsDeletions(keys)) return { ids: [], deletions: [deletion] };
    return { ids: deletion.key === undefined ? [] : [deletion.key], deletions: [] };
  };
  const write = async ({ ids, deletions }: Erasure, options?: KeyWriteOptions): Promise<void> => {
    await Promise.all([
      ids.length > 0 ? keys.destroy(ids, options) : undefined,
      deletions.length > 0 && recordsDeletions(keys) ? keys.recordDeletions(deletions, options) : undefined,
    ]);
  };
  const retry = () => {
    timer = undefined;
    if (stopped || waitingKeys.size + waitingDeletions.size === 0) return;
    const erasure = { ids: [...waitingKeys.values()], deletions: [...waitingDeletions.values()] };
    write(erasure).then(
      () => {
        for (const id of erasure.ids) waitingKeys.delete(id.toString('hex'));
        for (const deletion of erasure.deletions) waitingDeletions.delete(deletionKey(deletion));
        logger.info({ keys: erasure.ids.length, deletions: erasure.deletions.length }, 'destroyed the keys whose destruction had failed before');
        schedule();
      },
      (error: unknown) => {
        logger.warn({ err: error, keys: erasure.ids.length, deletions: erasure.deletions.length }, 'the key store still does not confirm the destruction of keys; trying again');
        schedule();
      },
    );
  };
  const schedule = () => {
    if (timer === undefined && !stopped && waitingKeys.size + waitingDeletions.size > 0) timer = setTimeout(retry, retryMs);
  };
  return {
    async erase(what, timeoutMs) {
      const erasure = erasureOf(what);
      if (erasure.ids.length + erasure.deletions.length === 0) return;
      try {
        await write(erasure, { timeoutMs });
      } catch (error) {
        for (const id of erasure.ids) waitingKeys.set(id.toString('hex'), id);
        for (const deletion of erasure.deletions) waitingDeletions.set(deletionKey(deletion), deletion);
        schedule();
        throw error;
      }
    },
    pending: () => waitingKeys.size + waitingDeletions.size,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

function deletionKey({ reportId, version }: Deletion): string {
  return `${reportId}/${version}`;
}
