// Owns the read model. Follows the log from a cursor, folds every record with projections/, and
// lets writers wait until their own record has been applied (read-your-writes).
import type { Logger } from 'pino';
import { decodeEvent } from '../projections/codec.js';
import { evolveIdempotency, type IdempotencyState } from '../projections/idempotency.js';
import { createState, evolve, type ReportsState } from '../projections/reports.js';
import { PositionWaiters, type Outcome } from './position-waiters.js';
import type { Snapshot } from './snapshot/snapshot-format.js';
import { CursorWaiters } from './cursor-waiters.js';
import { cursorLag, cursorPassed, cursorReached, cursorTotal, type Cursor, type EventLog, type LogGap, type LogPosition, type LogRecord } from './log/event-log.js';

export { ProjectionTimeoutError, type Outcome } from './position-waiters.js';

export interface ProjectorOptions {
  readonly log: EventLog;
  readonly logger: Logger;
  readonly state?: ReportsState;
  readonly keys?: IdempotencyState;
  readonly cursor?: Cursor;
  /** Records already folded into `state` (when it comes from a snapshot). */
  readonly events?: number;
  /** Called (synchronously, after a record is applied) every `snapshotEvery` records; 0: never. */
  readonly snapshotEvery?: number;
  readonly onSnapshotDue?: (projector: Projector) => void;
  /** How long to wait before following again after the log failed. */
  readonly retryDelayMs?: number;
  readonly now?: () => number;
}

export interface ProjectorProgress {
  readonly cursor: Cursor;
  readonly applied: number;
  readonly invalid: number;
  readonly lastAppliedAtMs: number | undefined;
  readonly lastRecordTimestampMs: number | undefined;
}

/** How often a long catch-up logs its progress. */
const CATCH_UP_REPORT_MS = 2000;

export class Projector {
  readonly state: ReportsState;
  /** Idempotency keys seen in the events, with the answer their first request got. */
  readonly keys: IdempotencyState;
  private readonly cursor: Map<number, number>;
  private readonly waiters = new PositionWaiters();
  private readonly cursorWaiters = new CursorWaiters();
  private readonly abort = new AbortController();
  private readonly readyTarget: Promise<void>;
  private isReady = false;
  private startedAtMs = 0;
  private lastCatchUpReportMs = 0;
  private applied = 0;
  private invalid = 0;
  private lastAppliedAtMs: number | undefined;
  private lastRecordTimestampMs: number | undefined;
  private running: Promise<void> | undefined;
  private readonly log: EventLog;
  private readonly logger: Logger;
  private readonly retryDelayMs: number;
  private readonly now: () => number;
  private markReady: () => void = () => undefined;
  /** Since when records have been waiting with no progress (for stall detection). */
  private behindSince: number | undefined;
  private appliedAtLastCheck = 0;

  private readonly snapshotEvery: number;
  private readonly onSnapshotDue: ((projector: Projector) => void) | undefined;
  private sinceSnapshot = 0;
  private readonly initialEvents: number;

  constructor({ log, logger, state = createState(), keys = new Map(), cursor = new Map(), events = 0, snapshotEvery = 0, onSnapshotDue, retryDelayMs = 1000, now = Date.now }: ProjectorOptions) {
    this.snapshotEvery = snapshotEvery;
    this.onSnapshotDue = onSnapshotDue;
    this.initialEvents = events;
    this.log = log;
    this.logger = logger;
    this.state = state;
    this.keys = keys;
    this.cursor = new Map(cursor);
    this.retryDelayMs = retryDelayMs;
    this.now = now;
    this.readyTarget = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  /** Starts following; `caughtUp()` resolves once the log head seen now has been applied. */
  start(): void {
    this.running ??= this.run();
  }

  /** Resolves when the read model has caught up with the log head seen at start. */
  caughtUp(): Promise<void> {
    return this.readyTarget;
  }

  isCaughtUp(): boolean {
    return this.isReady;
  }

  /**
   * Lag against `head`, and whether the projector has stalled: records have been waiting for
   * longer than `stallAfterMs` while none was applied. Remembers what it saw between calls.
   */
  lagAgainst(head: Cursor, stallAfterMs: number): { lagEvents: number; stalled: boolean } {
    const lagEvents = cursorLag(this.cursor, head);
    const now = this.now();
    if (lagEvents === 0) {
      this.behindSince = undefined;
    } else if (this.behindSince === undefined || this.applied !== this.appliedAtLastCheck) {
      this.behindSince = now;
    }
    this.appliedAtLastCheck = this.applied;
    return { lagEvents, stalled: this.behindSince !== undefined && now - this.behindSince > stallAfterMs };
  }

  /**
   * The read model as a snapshot. It shares the live maps: encode it before the next record is
   * applied (that is, synchronously).
   */
  snapshotView(): Snapshot {
    return { log: this.log.identity, cursor: new Map(this.cursor), events: this.initialEvents + this.applied, createdAt: new Date(this.now()).toISOString(), reports: this.state, keys: this.keys };
  }

  progress(): ProjectorProgress {
    return {
      cursor: new Map(this.cursor),
      applied: this.applied,
      invalid: this.invalid,
      lastAppliedAtMs: this.lastAppliedAtMs,
      lastRecordTimestampMs: this.lastRecordTimestampMs,
    };
  }

  private async run(): Promise<void> {
    this.startedAtMs = this.now();
    this.lastCatchUpReportMs = this.startedAtMs;
    const target = await this.headWithRetry();
    this.checkCaughtUp(target);
    while (!this.abort.signal.aborted) {
      try {
        const onGap = (gap: LogGap) => this.pass(gap, target);
        for await (const record of this.log.follow(this.cursor, { signal: this.abort.signal, onGap })) {
          this.apply(record);
          if (!this.isReady) this.checkCaughtUp(target);
        }
        // follow ended without our abort (e.g. the log was closed): wait before following again,
        // or this loop would spin without ever yielding.
        if (!this.abort.signal.aborted) await this.sleep(this.retryDelayMs);
      } catch (error) {
        if (this.abort.signal.aborted) break;
        this.logger.error({ err: error }, 'following the event log failed; retrying');
        await this.sleep(this.retryDelayMs);
      }
    }
  }

  private async headWithRetry(): Promise<Cursor> {
    while (!this.abort.signal.aborted) {
      try {
        return await this.log.head();
      } catch (error) {
        this.logger.error({ err: error }, 'cannot read the head of the event log; retrying');
        await this.sleep(this.retryDelayMs);
      }
    }
    return new Map();
  }

  private checkCaughtUp(target: Cursor): void {
    if (this.isReady) return;
    if (!cursorReached(this.cursor, target)) {
      this.reportCatchUp(target);
      return;
    }
    this.isReady = true;
    const seconds = (this.now() - this.startedAtMs) / 1000;
    this.logger.info({ applied: this.applied, reports: this.state.size, seconds }, 'read model caught up with the event log');
    this.markReady();
  }

  /** A long catch-up (a big log, no snapshot) says how far it is every few seconds. */
  private reportCatchUp(target: Cursor): void {
    const now = this.now();
    if (now - this.lastCatchUpReportMs < CATCH_UP_REPORT_MS) return;
    this.lastCatchUpReportMs = now;
    const total = cursorTotal(target);
    const done = total - cursorLag(this.cursor, target);
    const rate = Math.round(this.applied / Math.max(0.001, (now - this.startedAtMs) / 1000));
    this.logger.info({ done, total, eventsPerSecond: rate, etaSeconds: Math.round((total - done) / Math.max(1, rate)) }, 'catching up with the event log');
  }

  private apply(record: LogRecord): void {
    const { position } = record;
    const decoded = decodeEvent(record.value);
    let outcome: Outcome;
    if (decoded.ok) {
      evolveIdempotency(this.keys, this.state, decoded.event);
      outcome = evolve(this.state, decoded.event).kind;
    } else {
      outcome = 'invalid';
      this.invalid += 1;
      this.logger.warn({ partition: position.partition, offset: position.offset, reason: decoded.reason }, 'skipped a record that is not a valid report event');
    }
    this.applied += 1;
    this.lastAppliedAtMs = this.now();
    this.lastRecordTimestampMs = record.timestampMs;
    this.cursor.set(position.partition, position.offset + 1);
    this.waiters.settle(position, outcome);
    this.cursorWaiters.moved(this.cursor);
    if (this.snapshotEvery > 0 && ++this.sinceSnapshot >= this.snapshotEvery) {
      this.sinceSnapshot = 0;
      this.onSnapshotDue?.(this);
    }
  }

  /** Offsets that hold no record (transaction markers, aborted records) count as consumed. */
  private pass({ partition, next }: LogGap, target: Cursor): void {
    if (next <= (this.cursor.get(partition) ?? 0)) return;
    this.cursor.set(partition, next);
    this.cursorWaiters.moved(this.cursor);
    if (!this.isReady) this.checkCaughtUp(target);
  }

  /** Resolves with what the record at `position` did, once the read model has applied it. */
  waitFor(position: LogPosition, timeoutMs: number): Promise<Outcome> {
    if (cursorPassed(this.cursor, position)) return Promise.resolve(this.waiters.outcomeOf(position));
    return this.waiters.wait(position, timeoutMs);
  }

  /** Resolves once the read model has applied everything before `target` (ProjectionTimeoutError after `timeoutMs`). */
  reach(target: Cursor, timeoutMs: number): Promise<void> {
    return this.cursorWaiters.wait(this.cursor, target, timeoutMs);
  }

  /** Stops following; writers still waiting get a ProjectionTimeoutError rather than waiting forever. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.waiters.rejectAll();
    this.cursorWaiters.rejectAll();
    await this.running;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }
}
