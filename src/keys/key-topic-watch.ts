// A key topic deleted under a running server: kafkajs keeps asking for a topic that is gone, every
// key write times out, and the 503s and warnings name the event log, not the key topic. After a
// failed key write (at most once every CHECK_EVERY_MS, one check at a time) the topic list is read;
// a missing key topic is logged as an error naming it, once until the topic is seen again.
import type { Logger } from 'pino';

/** The least time between two checks of the topic list. */
const CHECK_EVERY_MS = 10_000;

export interface KeyTopicWatchOptions {
  readonly topic: string;
  /** Whether the topic exists now (the cluster's topic list); a failure means "not known". */
  readonly exists: () => Promise<boolean>;
  readonly logger: Logger;
  readonly everyMs?: number;
  readonly now?: () => number;
}

export class KeyTopicWatch {
  private lastCheckAt = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | undefined;
  private gone = false;
  private stopped = false;
  /** Acknowledged writes so far: a check that began before one does not say the topic is missing. */
  private writes = 0;

  constructor(private readonly options: KeyTopicWatchOptions) {}

  /** Whether the last check found the topic missing. */
  get missing(): boolean {
    return this.gone;
  }

  /** A key write failed (timed out, or refused): the topic list is read, unless it was lately. */
  failed(): void {
    const { everyMs = CHECK_EVERY_MS, now = performance.now.bind(performance) } = this.options;
    if (this.stopped || this.checking !== undefined || now() - this.lastCheckAt < everyMs) return;
    // The interval runs from the end of a check: probes of brokers that are away never run back to back.
    this.checking = this.check().finally(() => {
      this.lastCheckAt = now();
      this.checking = undefined;
    });
  }

  /** A key write was acknowledged: the topic is there (again). */
  written(): void {
    this.writes += 1;
    if (!this.gone) return;
    this.gone = false;
    this.options.logger.info({ topic: this.options.topic }, 'the key topic exists again');
  }

  /** Waits for a check under way; none starts after. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.checking;
  }

  private async check(): Promise<void> {
    const { topic, exists, logger } = this.options;
    const writesBefore = this.writes;
    let found: boolean;
    try {
      found = await exists();
    } catch (error) {
      logger.debug({ err: error, topic }, 'could not read the topic list after a failed key write');
      return;
    }
    if (found) {
      if (this.gone) logger.info({ topic }, 'the key topic exists again');
      this.gone = false;
      return;
    }
    // A write acknowledged meanwhile says more than a topic list (metadata lags a topic created again).
    if (this.gone || this.writes !== writesBefore) return;
    this.gone = true;
    logger.error(
      { topic },
      `the key topic ${topic} no longer exists (deleted under the running server?): every create and delete answers 503 until it is back, and the keys it held are gone with it unless it is restored; see "A missing key topic" in docs/kafka.md`,
    );
  }
}
