// What a server does with its key store once a start has caught up, for the keys a crash (or a
// shutdown) left undestroyed: keys.db is swept of every key no live report uses (tried again while
// it fails); on the key topic, whose keys other instances mint too, the catch-up's own leftovers
// are erased at once and the keys no live report used are looked at again a while later
// (key-upkeep.ts has the rules). Deletes answered without a write wait for keys.db's sweep (the
// service's `sweeping`), and what it destroys is told to the feeds.
import type { Logger } from 'pino';
import type { Ended, ErasedKey, ReadModel } from '../read-model/read-model.js';
import type { UnerasedDeletion } from './deletion-records.js';
import type { KeyId, KeyStore } from './key-store.js';
import {
  keyTopicSweepDelayMs,
  leftUnerased,
  liveKeyTexts,
  sweepBound,
  sweepKeyTopic,
  sweepOrphanKeys,
  type LeftUnerased,
} from './key-upkeep.js';

/** What the upkeep hands its findings to: the report service. */
export interface ErasingService {
  sweeping(sweep: Promise<unknown>): void;
  eraseLater(ended: Ended): void;
  eraseKeysLater(ids: readonly KeyId[]): void;
}

/** Who is told of the keys a sweep destroyed: the feeds (feed-hub.ts `erased`). */
export interface ErasureListener {
  erased(ids: readonly KeyId[]): void;
}

export interface StartUpkeepOptions {
  readonly logger: Logger;
  /** The key topic's sweep waits keyTopicSweepDelayMs of these. */
  readonly writeTimeoutMs: number;
  readonly keySweepDelayMs: number;
  /** How soon a failed sweep of keys.db is tried again. */
  readonly retryMs?: number;
  /** The read model has caught up with the log's head now (the key topic's sweep: key-upkeep.ts). */
  readonly current: () => Promise<void>;
  /**
   * The deletions the snapshot the start loaded lists as not erased when it was taken: the
   * catch-up does not fold them again, so they join what it finds (on the key topic; keys.db's
   * sweep finds every such key anyway).
   */
  readonly unerasedInSnapshot?: readonly UnerasedDeletion[];
}

/** A failed sweep of keys.db is tried again after this, twice as long after each failure, up to a minute. */
const SWEEP_RETRY_MS = 5000;
const SWEEP_RETRY_MAX_MS = 60_000;

export class StartUpkeep {
  /** keys.db's slots when the store opened: keys minted since are never swept (their creates may be in flight). */
  private readonly sweepBelow: number | undefined;
  private readonly unerased: LeftUnerased | undefined;
  private readonly closing = new AbortController();
  private service: ErasingService | undefined;
  private listener: ErasureListener | undefined;
  private caught = false;
  private handedOver = false;
  /** The sweeps under way (keys.db's latest attempt, the key topic's), for `close`. */
  private readonly underWay = new Set<Promise<unknown>>();
  private retryTimer: NodeJS.Timeout | undefined;
  /** keys.db's latest sweep, for the service once it exists. */
  private lastFileSweep: Promise<unknown> | undefined;

  constructor(
    private readonly model: ReadModel,
    private readonly keys: KeyStore,
    private readonly options: StartUpkeepOptions,
  ) {
    this.sweepBelow = sweepBound(keys);
    this.unerased = leftUnerased(keys);
  }

  /** The projector's `onEndedInCatchUp`, for a key store that has no sweep of its own. */
  get onEndedInCatchUp(): ErasedKey | undefined {
    return this.unerased?.onEnded;
  }

  /** The projector caught up: the sweeps begin. */
  caughtUp(): void {
    if (this.caught) return;
    this.caught = true;
    this.fromSnapshot();
    if (this.sweepBelow !== undefined) this.sweepFile(this.sweepBelow);
    else this.sweepTopic();
    this.handOver();
  }

  /**
   * The snapshot's deletions join what the catch-up found, those whose keys are held. A key a live
   * report uses is never among them (it would be a fault of the list); it is left, for good measure:
   * a destroyed key cannot be brought back.
   */
  private fromSnapshot(): void {
    const listed = this.options.unerasedInSnapshot ?? [];
    if (this.unerased === undefined || listed.length === 0) return;
    const keys = new Set(listed.map(({ key }) => key));
    for (const live of liveKeyTexts(this.model)) keys.delete(live);
    for (const { reportId, version, key } of listed)
      if (keys.has(key)) this.unerased.onEnded({ kind: 'deleted', reportId, version, key });
  }

  /** The service and the feeds exist. */
  wired(service: ErasingService, listener: ErasureListener): void {
    this.service = service;
    this.listener = listener;
    this.handOver();
  }

  /** Stops the sweeps: an interrupted one is done again at the next start. */
  async close(): Promise<void> {
    this.closing.abort();
    clearTimeout(this.retryTimer);
    await Promise.allSettled([...this.underWay]);
  }

  private sweepFile(below: number, retryMs = this.options.retryMs ?? SWEEP_RETRY_MS): void {
    if (this.closing.signal.aborted) return;
    const { logger } = this.options;
    const attempt = sweepOrphanKeys(this.model, this.keys, below, logger, (ids) => this.told(ids));
    this.track(attempt);
    this.service?.sweeping(attempt);
    this.lastFileSweep = attempt;
    attempt.catch((error: unknown) => {
      if (this.closing.signal.aborted) return;
      logger.error(
        { err: error, retryMs },
        'could not sweep the key store of the keys a crash left; deletes of absent reports answer 503 until it is done; trying again',
      );
      this.retryTimer = setTimeout(() => this.sweepFile(below, Math.min(2 * retryMs, SWEEP_RETRY_MAX_MS)), retryMs);
    });
  }

  private sweepTopic(): void {
    const sweep = sweepKeyTopic(this.model, this.keys, {
      afterMs: keyTopicSweepDelayMs(this.options.keySweepDelayMs, this.options.writeTimeoutMs),
      signal: this.closing.signal,
      erase: (ids) => this.service?.eraseKeysLater(ids),
      current: this.options.current,
      logger: this.options.logger,
    }).catch((error: unknown) => void this.options.logger.warn({ err: error }, 'could not sweep the key topic'));
    this.track(sweep);
  }

  /** Once caught up and wired: the service hears of keys.db's sweep and gets what the catch-up left unerased. */
  private handOver(): void {
    const { service } = this;
    if (service === undefined || !this.caught || this.handedOver) return;
    this.handedOver = true;
    if (this.lastFileSweep !== undefined) service.sweeping(this.lastFileSweep);
    const found = this.unerased?.take() ?? [];
    if (found.length > 0)
      this.options.logger.info({ erasures: found.length }, 'erasing what a crash left unerased in the history');
    for (const ended of found) service.eraseLater(ended);
  }

  private told(ids: readonly KeyId[]): void {
    try {
      this.listener?.erased(ids);
    } catch (error) {
      this.options.logger.error({ err: error }, 'telling of destroyed keys failed');
    }
  }

  private track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.underWay.add(settled);
    void settled.then(() => this.underWay.delete(settled));
  }
}
