// Writes the roll records that segment-rolls.ts finds due, on one timer: armed for the next due
// time after every batch the follower read, and never sooner than a margin after the last roll
// record (the follower needs a moment to read it back before the partition counts as rolled).
import type { Logger } from 'pino';
import { ROLL_MARGIN_MS } from '../log/kafka/key-topic-settings.js';
import type { SegmentRolls } from './segment-rolls.js';

/** Most a timer waits at once (Node's timers take at most 2^31-1 ms); it is armed again then. */
const MAX_TIMER_MS = 3_600_000;

export class RollRecords {
  private timer: NodeJS.Timeout | undefined;
  /** No roll record is written before this (epoch ms). */
  private notBeforeMs = 0;
  private stopped = false;
  /** A roll record failed and none was written since: said once, not at every try of an outage. */
  private failing = false;

  constructor(
    private readonly rolls: SegmentRolls,
    /** Appends a roll record to each partition; resolves once acknowledged. */
    private readonly write: (partitions: readonly number[]) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** Arms the timer for the next roll record due, if any. */
  schedule(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const due = this.rolls.nextDueMs();
    if (due === undefined || this.stopped) return;
    const waitMs = Math.min(MAX_TIMER_MS, Math.max(0, Math.max(due, this.notBeforeMs) - Date.now()));
    // Unref'd: a roll record is never a reason to keep a process alive (stop clears it anyway).
    this.timer = setTimeout(() => this.fire(), waitMs).unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private fire(): void {
    const now = Date.now();
    const partitions = this.rolls.due(now);
    this.notBeforeMs = now + ROLL_MARGIN_MS;
    if (partitions.length === 0) return this.schedule();
    this.write(partitions)
      .then(
        () => {
          if (this.failing) this.log.info({ partitions }, 'wrote a roll record to the key topic again');
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing)
            this.log.warn(
              { err: error, partitions },
              'could not write a roll record to the key topic: destroyed keys wait in their segment; trying again',
            );
          this.failing = true;
        },
      )
      .finally(() => this.schedule());
  }
}
