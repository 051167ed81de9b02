// Destroys content keys for the service: a deleted report's key before its 204 (and, where the key
// store keeps a record of deletions, the record of the delete with it: a report written in the
// clear has no key, but its deletion is recorded all the same), a void create's key before it is
// decided again. A destruction the store could not confirm in time fails the request (503: the
// delete took effect, its erasure is not confirmed) and is tried again in the background until the
// store confirms it, so an unreachable key store delays the erasure but never forgets it.
// The projector asks too (`eraseLater`), for every delete and void create it folds whoever wrote
// it: another instance's, or a write answered 503 that landed late, whose writer no longer waits.
// What was erased lately is remembered, so what this process has just erased is not asked for again.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { recordsDeletions, type Deletion } from '../keys/deletion-records.js';
import type { KeyId, KeyStore, KeyWriteOptions } from '../keys/key-store.js';
import { settleWithin } from '../log/settle-within.js';

const RETRY_MS = 1000;
/** A request's erasure refused by the key store is written again this soon, within the request's time. */
const AGAIN_WITHIN_MS = 100;
/** What the projector asks for is erased together, this soon after the first. */
const LATER_MS = 10;
/** Erasures remembered, so that the projector does not ask for them again. */
const RECENTLY_ERASED = 4096;

/** A key to destroy, or what a delete that took effect ends (its key, and its record). */
export type Erasable = readonly KeyId[] | Deletion;

export interface KeyEraser {
  /** Erases within `timeoutMs`; rejects if the store did not confirm (and keeps trying). */
  erase(what: Erasable, timeoutMs: number): Promise<void>;
  /** Erases in the background (tried again until confirmed), unless it was erased lately here. */
  eraseLater(what: Erasable): void;
  /**
   * Writes now, within `timeoutMs`, an erasure of report `reportId`'s deletion that is still being
   * tried again (a delete answered 503, or one the projector folded); rejects if the store does not
   * confirm it. Resolves at once when none is waiting: what answers about a deleted report (a retry
   * of its delete) must not say it is gone while its key may still open it.
   */
  settle(reportId: string, timeoutMs: number): Promise<void>;
  /** Whether an erasure of report `reportId`'s deletion may still be waiting (`settle` has work). */
  waitsFor(reportId: string): boolean;
  /** Keys (and deletions) whose erasure is still being tried again. */
  pending(): number;
  /** The deletions whose erasure is being written or waits to be tried again (a snapshot lists them). */
  unconfirmed(): Deletion[];
  /** Stops trying again (at shutdown: what is left is swept by the next start, start-upkeep.ts). */
  stop(): void;
}

interface Erasure {
  readonly ids: readonly KeyId[];
  readonly deletions: readonly Deletion[];
}

const keyName = (id: KeyId) => `key:${id.toString('hex')}`;
const deletionName = ({ reportId, version }: Deletion) => `deleted:${reportId}/${version}`;

/**
 * `onErased` hears of every key destroyed here (a feed that showed its content may still hold it:
 * feed-hub.ts), right after the store confirms it.
 */
export function createKeyEraser(
  keys: KeyStore,
  logger: Logger,
  retryMs = RETRY_MS,
  onErased: (ids: readonly KeyId[]) => void = () => undefined,
): KeyEraser {
  const waitingKeys = new Map<string, KeyId>();
  const waitingDeletions = new Map<string, Deletion>();
  const recentlyErased = new Set<string>();
  // Oldest first, overwritten in turn: a Set evicting its first entry walks past every entry deleted
  // before it (V8 keeps them until the table is rebuilt), thousands of steps an erasure at this size.
  const recentOrder: (string | undefined)[] = new Array<string | undefined>(RECENTLY_ERASED).fill(undefined);
  let recentNext = 0;
  const remember = (name: string) => {
    if (recentlyErased.has(name)) return;
    const evicted = recentOrder[recentNext];
    if (evicted !== undefined) recentlyErased.delete(evicted);
    recentOrder[recentNext] = name;
    recentNext = (recentNext + 1) % RECENTLY_ERASED;
    recentlyErased.add(name);
  };
  /** Erasures a request is writing now (`erase`). */
  const beingWritten = new Set<string>();
  /**
   * Deletions whose key is not confirmed destroyed, by key (being written, or waiting to be tried
   * again): two incarnations of one report may both wait, unlike in `waitingReports`.
   */
  const unconfirmedByKey = new Map<string, Deletion>();
  const markUnconfirmed = (what: Erasable) => {
    const deletion = Array.isArray(what) ? undefined : (what as Deletion);
    if (deletion?.key !== undefined) unconfirmedByKey.set(keyName(deletion.key), deletion);
  };
  /** The background write under way, and what it erases. */
  let retrying: { readonly names: ReadonlySet<string>; readonly done: Promise<void> } | undefined;
  /** The deletion of each report whose erasure waits to be tried again (for `settle`). */
  const waitingReports = new Map<string, Deletion>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // A store without a record of deletions is asked for the key's destruction only.
  const erasureOf = (what: Erasable): Erasure => {
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
  const namesOf = ({ ids, deletions }: Erasure) => [...ids.map(keyName), ...deletions.map(deletionName)];
  const erased = ({ ids, deletions }: Erasure) => {
    const names = [
      ...ids.map(keyName),
      ...deletions.map(deletionName),
      ...deletions.flatMap((deletion) => (deletion.key === undefined ? [] : [keyName(deletion.key)])),
    ];
    for (const name of names) {
      waitingKeys.delete(name);
      waitingDeletions.delete(name);
      unconfirmedByKey.delete(name);
      remember(name);
    }
    // After the bookkeeping, and never a reason for it to fail: the erasure is confirmed.
    try {
      onErased([...ids, ...deletions.flatMap((deletion) => (deletion.key === undefined ? [] : [deletion.key]))]);
    } catch (error) {
      logger.error({ err: error }, 'telling of destroyed keys failed');
    }
  };
  /** Whether any part of a deletion's erasure still waits to be tried again. */
  const stillWaiting = (deletion: Deletion) =>
    namesOf(erasureOf(deletion)).some((name) => waitingKeys.has(name) || waitingDeletions.has(name));
  const waitFor = (what: Erasable, erasure: Erasure) => {
    markUnconfirmed(what);
    if (!Array.isArray(what)) waitingReports.set((what as Deletion).reportId, what as Deletion);
    wait(erasure);
  };
  const wait = ({ ids, deletions }: Erasure) => {
    for (const id of ids) waitingKeys.set(keyName(id), id);
    for (const deletion of deletions) waitingDeletions.set(deletionName(deletion), deletion);
  };
  const retry = () => {
    timer = undefined;
    if (stopped || waitingKeys.size + waitingDeletions.size === 0) return;
    const erasure = { ids: [...waitingKeys.values()], deletions: [...waitingDeletions.values()] };
    const names = new Set(namesOf(erasure));
    const done = write(erasure);
    // `settle` waits for this write rather than writing the same erasure again beside it.
    retrying = { names, done: done.catch(() => undefined) };
    void retrying.done.then(() => (retrying = undefined));
    done.then(
      () => {
        erased(erasure);
        // Once a batch (not on every erasure): the reports whose erasures it finished.
        for (const [reportId, deletion] of waitingReports) if (!stillWaiting(deletion)) waitingReports.delete(reportId);
        logger.debug({ keys: erasure.ids.length, deletions: erasure.deletions.length }, 'erased in the background');
        schedule();
      },
      (error: unknown) => {
        logger.warn(
          { err: error, keys: erasure.ids.length, deletions: erasure.deletions.length },
          'the key store still does not confirm the destruction of keys; trying again',
        );
        schedule();
      },
    );
  };
  const schedule = (delayMs = retryMs) => {
    if (timer === undefined && !stopped && waitingKeys.size + waitingDeletions.size > 0)
      timer = setTimeout(retry, delayMs);
  };
  /**
   * Writes the erasure, again after a failure while `timeoutMs` leaves room: a request whose event is
   * written answers 503 for its erasure at its time-out, not at a key store's first refusal (a
   * partition without a leader for a moment), as a write answers 503 only once it cannot know more.
   */
  const writeWithin = async (erasure: Erasure, timeoutMs: number): Promise<void> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      try {
        await write(erasure, { timeoutMs: Math.max(1, deadline - performance.now()) });
        return;
      } catch (error) {
        const remaining = deadline - performance.now();
        if (stopped || remaining <= 0) throw error;
        await delay(Math.min(AGAIN_WITHIN_MS, remaining));
      }
    }
  };
  const erase = async (what: Erasable, timeoutMs: number): Promise<void> => {
    const erasure = erasureOf(what);
    if (erasure.ids.length + erasure.deletions.length === 0) return;
    // Written here, so not by the background meanwhile: the fold queues the same erasure when it
    // folds the request's own event, and a deletion record written twice takes two slots.
    const names = namesOf(erasure);
    for (const name of names) {
      waitingKeys.delete(name);
      waitingDeletions.delete(name);
      beingWritten.add(name);
    }
    markUnconfirmed(what);
    try {
      await writeWithin(erasure, timeoutMs);
      erased(erasure);
      if (!Array.isArray(what)) {
        const { reportId, version } = what as Deletion;
        if (waitingReports.get(reportId)?.version === version) waitingReports.delete(reportId);
      }
    } catch (error) {
      waitFor(what, erasure);
      schedule();
      throw error;
    } finally {
      for (const name of names) beingWritten.delete(name);
    }
  };
  return {
    erase,
    eraseLater(what) {
      const erasure = erasureOf(what);
      const settled = (name: string) => recentlyErased.has(name) || beingWritten.has(name);
      const fresh = {
        ids: erasure.ids.filter((id) => !settled(keyName(id))),
        deletions: erasure.deletions.filter((deletion) => !settled(deletionName(deletion))),
      };
      if (fresh.ids.length + fresh.deletions.length === 0) return;
      waitFor(what, fresh);
      schedule(LATER_MS);
    },
    async settle(reportId, timeoutMs) {
      const deletion = waitingReports.get(reportId);
      if (deletion === undefined) return;
      // The background is writing it: its outcome first (a second write would record the deletion twice).
      const deadline = performance.now() + timeoutMs;
      const inFlight = retrying;
      if (inFlight !== undefined && namesOf(erasureOf(deletion)).some((name) => inFlight.names.has(name)))
        await settleWithin(timeoutMs, inFlight.done);
      if (stillWaiting(deletion)) await erase(deletion, Math.max(1, deadline - performance.now()));
      else waitingReports.delete(reportId);
    },
    waitsFor: (reportId) => waitingReports.has(reportId),
    pending: () => waitingKeys.size + waitingDeletions.size,
    unconfirmed: () => [...unconfirmedByKey.values()],
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
