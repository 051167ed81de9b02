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
import { byWriteGroup, named, type Erasure, type NamedErasure } from './named-erasure.js';
import { RecentNames } from './recent-names.js';

const RETRY_MS = 1000;
/** A request's erasure refused by the key store is written again this soon, within the request's time. */
const AGAIN_WITHIN_MS = 100;
/** What the projector asks for is erased together, this soon after the first. */
const LATER_MS = 10;
/** Erasures remembered, so that the projector does not ask for them again: this many keys, and as many deletions. */
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

/** A background write under way: the names it erases, and its end (confirmed or not: it never rejects). */
interface InFlight {
  readonly keys: ReadonlySet<string>;
  readonly deletions: ReadonlySet<string>;
  readonly done: Promise<void>;
}

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
  // A store without a record of deletions is asked for the key's destruction only.
  const records = recordsDeletions(keys) ? keys : undefined;
  const waitingKeys = new Map<string, KeyId>();
  const waitingDeletions = new Map<string, Deletion>();
  const recentKeys = new RecentNames(RECENTLY_ERASED);
  const recentDeletions = new RecentNames(RECENTLY_ERASED);
  /** Erasures a request is writing now (`erase`). */
  const writingKeys = new Set<string>();
  const writingDeletions = new Set<string>();
  /**
   * Deletions whose key is not confirmed destroyed, by key (being written, or waiting to be tried
   * again): two incarnations of one report may both wait, unlike in `waitingReports`.
   */
  const unconfirmedByKey = new Map<string, Deletion>();
  /** The background writes under way (one per write group of the store a round), and what each erases. */
  const retrying = new Set<InFlight>();
  /**
   * What those writes carry: a round leaves it out, so what a stuck group (a partition without a
   * leader) holds is not sent again and again behind itself, round after round.
   */
  const retryingKeys = new Set<string>();
  const retryingDeletions = new Set<string>();
  /** The deletion of each report whose erasure waits to be tried again (for `settle`). */
  const waitingReports = new Map<string, Deletion>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const erasureOf = (what: Erasable): NamedErasure => {
    if (Array.isArray(what)) return named(what as readonly KeyId[], []);
    const deletion = what as Deletion;
    if (records !== undefined) return named([], [deletion]);
    return named(deletion.key === undefined ? [] : [deletion.key], []);
  };
  /** The name of the key a deletion ends, when it has one (`unconfirmedByKey`). */
  const endedKeyName = (what: Erasable, erasure: NamedErasure): string | undefined => {
    if (Array.isArray(what) || (what as Deletion).key === undefined) return undefined;
    return records !== undefined ? erasure.endedKeyNames[0] : erasure.idNames[0];
  };
  const markUnconfirmed = (what: Erasable, erasure: NamedErasure) => {
    const name = endedKeyName(what, erasure);
    if (name !== undefined) unconfirmedByKey.set(name, what as Deletion);
  };
  const write = ({ ids, deletions }: Erasure, options?: KeyWriteOptions): Promise<void> => {
    // A store's throw becomes a rejection: the timer's retry warns and tries again, never throws.
    try {
      const destroying = ids.length > 0 ? keys.destroy(ids, options) : undefined;
      const recording = deletions.length > 0 ? records?.recordDeletions(deletions, options) : undefined;
      if (destroying === undefined) return recording ?? Promise.resolve();
      if (recording === undefined) return destroying;
      return Promise.all([destroying, recording]).then(() => undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  /** A key confirmed destroyed, whether asked for by itself or ended by a deletion. */
  const keyErased = (name: string) => {
    waitingKeys.delete(name);
    unconfirmedByKey.delete(name);
    recentKeys.add(name);
  };
  const erased = (erasure: NamedErasure) => {
    for (const name of erasure.idNames) keyErased(name);
    for (const name of erasure.endedKeyNames) keyErased(name);
    for (const name of erasure.deletionNames) {
      waitingDeletions.delete(name);
      recentDeletions.add(name);
    }
    const { ids, endedKeys } = erasure;
    if (ids.length + endedKeys.length === 0) return;
    // After the bookkeeping, and never a reason for it to fail: the erasure is confirmed.
    try {
      onErased(endedKeys.length === 0 ? ids : ids.length === 0 ? endedKeys : [...ids, ...endedKeys]);
    } catch (error) {
      logger.error({ err: error }, 'telling of destroyed keys failed');
    }
  };
  /** Whether any part of a deletion's erasure still waits to be tried again. */
  const stillWaiting = (deletion: Deletion) => {
    const { idNames, deletionNames } = erasureOf(deletion);
    return idNames.some((name) => waitingKeys.has(name)) || deletionNames.some((name) => waitingDeletions.has(name));
  };
  const waitFor = (what: Erasable, erasure: NamedErasure) => {
    markUnconfirmed(what, erasure);
    if (!Array.isArray(what)) waitingReports.set((what as Deletion).reportId, what as Deletion);
    erasure.ids.forEach((id, i) => waitingKeys.set(erasure.idNames[i] as string, id));
    erasure.deletions.forEach((deletion, i) => waitingDeletions.set(erasure.deletionNames[i] as string, deletion));
  };
  /** Forgets a report's waiting deletion once nothing of its erasure waits. */
  const reportDone = (deletion: Deletion) => {
    const waiting = waitingReports.get(deletion.reportId);
    if (waiting !== undefined && waiting.version === deletion.version && !stillWaiting(waiting))
      waitingReports.delete(deletion.reportId);
  };
  /** One background write: its outcome confirms or warns, and lets its group be tried again. */
  const retryPart = (part: NamedErasure) => {
    // The deletions it ends, taken before `erased` forgets which key ended which.
    const ended: Deletion[] = [...part.deletions];
    for (const name of part.idNames) {
      const deletion = unconfirmedByKey.get(name);
      if (deletion !== undefined) ended.push(deletion);
    }
    for (const name of part.idNames) retryingKeys.add(name);
    for (const name of part.deletionNames) retryingDeletions.add(name);
    const done = write(part).then(
      () => {
        erased(part);
        for (const deletion of ended) reportDone(deletion);
        logger.debug({ keys: part.ids.length, deletions: part.deletions.length }, 'erased in the background');
      },
      (error: unknown) => {
        logger.warn(
          { err: error, keys: part.ids.length, deletions: part.deletions.length },
          'the key store still does not confirm the destruction of keys; trying again',
        );
      },
    );
    const entry: InFlight = { keys: new Set(part.idNames), deletions: new Set(part.deletionNames), done };
    retrying.add(entry);
    void done.then(() => {
      retrying.delete(entry);
      for (const name of part.idNames) retryingKeys.delete(name);
      for (const name of part.deletionNames) retryingDeletions.delete(name);
      schedule();
    });
  };
  const retry = () => {
    timer = undefined;
    if (stopped) return;
    const ids: KeyId[] = [];
    for (const [name, id] of waitingKeys) if (!retryingKeys.has(name)) ids.push(id);
    const deletions: Deletion[] = [];
    for (const [name, deletion] of waitingDeletions) if (!retryingDeletions.has(name)) deletions.push(deletion);
    if (ids.length + deletions.length === 0) return;
    // A write per group, each tried again by itself: one the store cannot take now holds back none
    // of the others, for the same writes as one of everything (which the store splits by group).
    for (const part of byWriteGroup(named(ids, deletions), keys.writeGroupOf?.bind(keys))) retryPart(part);
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
    for (const name of erasure.idNames) {
      waitingKeys.delete(name);
      writingKeys.add(name);
    }
    for (const name of erasure.deletionNames) {
      waitingDeletions.delete(name);
      writingDeletions.add(name);
    }
    markUnconfirmed(what, erasure);
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
      for (const name of erasure.idNames) writingKeys.delete(name);
      for (const name of erasure.deletionNames) writingDeletions.delete(name);
    }
  };
  const settledKey = (name: string) => recentKeys.has(name) || writingKeys.has(name);
  const settledDeletion = (name: string) => recentDeletions.has(name) || writingDeletions.has(name);
  return {
    erase,
    eraseLater(what) {
      const erasure = erasureOf(what);
      const ids = erasure.ids.filter((_, i) => !settledKey(erasure.idNames[i] as string));
      const deletions = erasure.deletions.filter((_, i) => !settledDeletion(erasure.deletionNames[i] as string));
      if (ids.length + deletions.length === 0) return;
      const fresh =
        ids.length === erasure.ids.length && deletions.length === erasure.deletions.length
          ? erasure
          : named(ids, deletions);
      waitFor(what, fresh);
      schedule(LATER_MS);
    },
    async settle(reportId, timeoutMs) {
      const deletion = waitingReports.get(reportId);
      if (deletion === undefined) return;
      // The background is writing it: that write's outcome first (a second write would record the
      // deletion twice), not the other groups' (one may wait for a partition without a leader).
      const deadline = performance.now() + timeoutMs;
      const { idNames, deletionNames } = erasureOf(deletion);
      const carrying = [...retrying].filter(
        (write) =>
          idNames.some((name) => write.keys.has(name)) || deletionNames.some((name) => write.deletions.has(name)),
      );
      if (carrying.length > 0) await settleWithin(timeoutMs, Promise.all(carrying.map(({ done }) => done)));
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
