// What a server does with its key store besides sealing and erasing: at start, makes sure the key
// store holds the newest key the log refers to and that the keys it holds open their reports'
// content (keys.db cut short, lost, or another store's stops the start, never reads as "every
// report erased"), and once the read model has caught up, destroys the keys
// that no live report uses: those a crash left behind (a key put whose create never reached the log,
// a deleted report's or a void create's key whose destruction the crash cut short). The rules are
// here; start-upkeep.ts runs them in a server.
import { setImmediate as yieldToEventLoop, setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isSealedReport } from '../../projections/reports.js';
import { openContent } from '../../projections/sealing.js';
import type { Ended, ErasedKey, ReadModel } from '../read-model/read-model.js';
import { keyIdText, parseKeyId, type ContentKey, type KeyId, type KeyStore } from './key-store.js';
import type { SweepOptions } from './sweep-orphans.js';

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

/** The key topic's sweep stops short, as a key topic shared with another event topic, of more unused keys than this and than this share of those held. */
const SWEEP_BRAKE_KEYS = 1000;
const SWEEP_BRAKE_SHARE = 0.1;
/**
 * And of more than this many when they are most of those held: a small store's key topic named by
 * another deployment's REPORTS_KEY_TOPIC (an operator review: 20 keys, every one destroyed by a
 * new instance on another topic) is all unused keys, while a crash leaves a few among many.
 */
const SWEEP_BRAKE_FEW_KEYS = 10;
const SWEEP_BRAKE_MOST = 0.5;

/** A key store that holds every key it read in memory (the key topic's), and answers from there at once. */
export interface KeysInMemory {
  heldInMemory(id: KeyId): boolean;
  /** How many keys are held now. */
  heldCount(): number;
  /** The ids (as text) of the keys held now that `named` does not name. */
  unnamedInMemory(named: Iterable<string>): Promise<string[]>;
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

/**
 * keys.db holds, for a live report's key, a key that does not open the report's content: a key is
 * written once and only destroyed after, so keys.db and events.log are not one store's (either
 * copied over from another store). Started, every read would fail and the sweep would destroy keys.
 */
export class KeysOfAnotherStoreError extends Error {
  constructor(description: string, reportId: string, keyId: string) {
    const path = description.replace(/^keys:/, '');
    super(
      `${path} holds key ${keyId} of report ${reportId}, but that key does not open the report's content: ${path} and the event log beside it are not one store's (one of them copied over from another store?); put back the two files that belong together (or restore both from a backup); refusing to start rather than read reports' content as erased and sweep the file's keys`,
    );
    this.name = 'KeysOfAnotherStoreError';
  }
}

/** A key store that reads a key synchronously (keys.db, for the start's check before the first write). */
export interface KeysReadNow {
  getNow(id: KeyId): ContentKey | undefined;
}

const readsKeysNow = (keys: KeyStore): keys is KeyStore & KeysReadNow & HeldKeys =>
  holdsKeys(keys) && typeof (keys as Partial<KeysReadNow>).getNow === 'function';

/** How many live sealed reports' keys a start opens to check keys.db against the log... */
const KEYS_OPENED_AT_START = 8;
/** ...among at most this many live sealed reports (those whose key the file does not hold are passed over). */
const KEYS_LOOKED_AT_START = 256;

/**
 * Throws KeysOfAnotherStoreError when a live report's key, held by keys.db, does not open its
 * content; a few are opened (KEYS_OPENED_AT_START), read at once, before the server takes a write.
 * Only for keys.db: a key topic holds keys other producers wrote too. A report whose key is not
 * held is passed over (a missing key is counted when read, and never stops the service).
 */
export function checkKeysOpenContent(model: ReadModel, keys: KeyStore): void {
  if (!readsKeysNow(keys)) return;
  let opened = 0;
  for (const { id, report } of model.reports.sealedSample(KEYS_LOOKED_AT_START)) {
    if (!isSealedReport(report)) continue;
    const key = keys.getNow(parseKeyId(report.sealed.key));
    if (key === undefined) continue;
    const context = report.expectedversion === undefined ? { id } : { id, expectedversion: report.expectedversion };
    if (openContent(report.sealed, key.secret, context) === undefined)
      throw new KeysOfAnotherStoreError(keys.description, id, report.sealed.key);
    opened += 1;
    if (opened >= KEYS_OPENED_AT_START) return;
  }
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

/** Found leftovers looked at again (those since destroyed dropped) once there are this many, then twice as many as are left. */
const LOOK_AGAIN_FROM = 4096;

/** What a start's catch-up found a crash may have left unerased, collected as it folds and taken once. */
export interface LeftUnerased {
  /** The projector's `onEndedInCatchUp`. */
  readonly onEnded: ErasedKey;
  /** What was found since the last call, oldest first. */
  take(): Ended[];
}

/**
 * For a key store with no sweep of keys.db's kind (the key topic: several instances mint keys there,
 * and a key no live report uses may be a create's still in flight elsewhere, so it is taken for an
 * orphan only after a wait: sweepKeyTopic), what the start's catch-up folds that ends a key the
 * store still holds: a delete or a void create whose
 * writer crashed before destroying its key, and no running instance folded since. Its key is used by
 * nothing any more, whoever wrote it; a delete still being erased by another instance is erased twice
 * (one more tombstone). Undefined for a store that sweeps (keys.db) or keeps no keys in memory.
 */
export function leftUnerased(keys: KeyStore): LeftUnerased | undefined {
  if (sweepsKeys(keys) || !keepsKeysInMemory(keys)) return undefined;
  const stillHeld = (ended: Ended) => {
    if (ended.key === undefined) return false;
    try {
      return keys.heldInMemory(parseKeyId(ended.key));
    } catch {
      return false; // Not a key id this store could ever hold.
    }
  };
  let found: Ended[] = [];
  // A catch-up held back by one partition folds the others' live traffic meanwhile, whose keys
  // their writers destroy a moment later: what is found is looked at again as it grows.
  let lookAgainAt = LOOK_AGAIN_FROM;
  return {
    onEnded(ended) {
      if (!stillHeld(ended)) return;
      found.push(ended);
      if (found.length < lookAgainAt) return;
      found = found.filter(stillHeld);
      lookAgainAt = Math.max(LOOK_AGAIN_FROM, 2 * found.length);
    },
    take() {
      const taken = found.filter(stillHeld);
      found = [];
      return taken;
    },
  };
}

/**
 * How long after a start's catch-up the key topic's sweep looks again at the keys no live report
 * used then (REPORTS_KEY_SWEEP_DELAY_MS): at least four write time-outs, the longest a create's
 * event is expected on its way after its key (a write's own time-out, a leader's failover).
 */
export function keyTopicSweepDelayMs(configuredMs: number, writeTimeoutMs: number): number {
  return Math.max(configuredMs, 4 * writeTimeoutMs);
}

export interface KeyTopicSweep {
  /** How long to wait before the second look (keyTopicSweepDelayMs). */
  readonly afterMs: number;
  /** Aborts the wait (the server closes). */
  readonly signal: AbortSignal;
  /** Destroys the keys (the service's eraser, which tells the feeds). */
  readonly erase: (ids: readonly KeyId[]) => void;
  /**
   * Resolves once the read model holds every event the log held when asked; rejects when it cannot
   * in time (a partition it cannot read): a model that lags would take a live report's key for unused.
   */
  readonly current: () => Promise<void>;
  readonly logger: Logger;
}

/**
 * The key topic's sweep, for what no catch-up folds again: a delete (or a void create) whose key a
 * crash or a shutdown left undestroyed, once a snapshot written since covers its event (a snapshot
 * keeps no key of a deleted report). The keys held when the start caught up that no live report
 * used then are looked at again `afterMs` later, and those still held and still unused are
 * destroyed, once the model holds everything the event log held by then. The wait is for the other
 * instances: a key is put before its create's event, and that event may be on its way for a while
 * (a paused leader, a write timeout); the key of a create that lands later still is destroyed, and
 * its report reads as one whose key was lost (docs/erasure.md).
 * How many it destroyed; 0 for a store that keeps no keys in memory, or when aborted.
 */
export async function sweepKeyTopic(model: ReadModel, keys: KeyStore, sweep: KeyTopicSweep): Promise<number> {
  if (!keepsKeysInMemory(keys)) return 0;
  const candidates = await keys.unnamedInMemory(liveKeyTexts(model));
  if (candidates.length === 0) return 0;
  // A crash leaves a few keys unused; a key topic that also serves another event topic (one
  // REPORTS_KEY_TOPIC set for two deployments) shows that deployment's live keys as unused here.
  const held = keys.heldCount();
  const unused = candidates.length;
  if (
    (unused > SWEEP_BRAKE_KEYS && unused > held * SWEEP_BRAKE_SHARE) ||
    (unused > SWEEP_BRAKE_FEW_KEYS && unused > held * SWEEP_BRAKE_MOST)
  ) {
    sweep.logger.error(
      { unused: candidates.length, held },
      'not sweeping the key topic: more of its keys than a crash leaves are used by no live report of this event topic; a key topic must serve one event topic only (REPORTS_KEY_TOPIC)',
    );
    return 0;
  }
  // Looked at again once the wait is over and the model has caught up with the log: until then, again and again.
  for (;;) {
    try {
      await delay(sweep.afterMs, undefined, { signal: sweep.signal });
    } catch {
      return 0; // Aborted: the server closes; the next start looks again.
    }
    try {
      await Promise.race([sweep.current(), abortedBy(sweep.signal)]);
      break;
    } catch (error) {
      if (sweep.signal.aborted) return 0;
      sweep.logger.warn(
        { err: error, keys: candidates.length },
        "the key topic's sweep waits: the read model is behind the event log",
      );
    }
  }
  const left = new Set(candidates.filter((idText) => keys.heldInMemory(parseKeyId(idText))));
  let taken = 0;
  for (const idText of liveKeyTexts(model)) {
    left.delete(idText);
    if (++taken % 65_536 === 0) await yieldToEventLoop();
  }
  if (left.size === 0 || sweep.signal.aborted) return 0;
  sweep.logger.info(
    { keys: left.size },
    'destroying keys of the key topic that no live report uses (a delete or a void create whose erasure a crash or a shutdown cut short)',
  );
  sweep.erase([...left].map(parseKeyId));
  return left.size;
}

/** Rejects once `signal` is aborted. */
function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
}

/** The key ids of the live reports of `model`, as text. */
export function* liveKeyTexts(model: ReadModel): Generator<string> {
  for (const id of model.reports.sealedKeyIds()) yield keyIdText(id);
}
