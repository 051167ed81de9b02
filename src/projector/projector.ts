// Folds every record of the log into the read model with applyRecord, from the model's cursor on:
// the records this process appends as the log hands them over once durable (a CommitFeed), everything
// else (other writers, the history at start) by following the log. Lets writers wait until their
// own record has been applied (read-your-writes) or until the model has reached a position (fresh
// answers). What it applies it tells a ProjectionHealth; snapshots and readiness are other
// modules' business.
import type { Logger } from 'pino';
import { CatchUpWaiters } from './catch-up-waiters.js';
import {
  cursorLag,
  cursorPassed,
  cursorReached,
  cursorTotal,
  type Cursor,
  type EventLog,
  type LogGap,
  type LogPosition,
  type LogRecord,
} from '../log/event-log.js';
import { RecordWaiters, type Outcome } from './record-waiters.js';
import { EncodedEvents } from './encoded-events.js';
import { pause } from '../pause.js';
import { ProjectionHealth } from './health.js';
import {
  applyRecord,
  createReadModel,
  passGap,
  type Applied,
  type ErasedKey,
  type ReadModel,
} from '../read-model/read-model.js';
import { foldLog, SHARDED_FOLD_RECORDS } from './fold-log.js';
import { CommitListeners, hasCommitFeed, type CommitListener } from '../log/capabilities.js';

export { ProjectionTimeoutError } from './projection-timeout.js';
export type { Outcome } from './record-waiters.js';

export interface ProjectorOptions {
  readonly log: EventLog;
  readonly logger: Logger;
  readonly model?: ReadModel;
  /** Told what is applied and when the model caught up (default: one with a 10 s stall limit). */
  readonly health?: ProjectionHealth;
  /** Called after every batch of applied records with their number (snapshot scheduling). */
  readonly onApplied?: (records: number) => void;
  /** Called once, when the model has caught up with the head seen at start. */
  readonly onCaughtUp?: () => void;
  /** Told, once caught up, the key of content each folded event ends (read-model.ts ErasedKey): to be destroyed. */
  readonly onErased?: ErasedKey;
  /**
   * Told the same while catching up at start (a catch-up told so folds on one thread): what a
   * crash may have left unerased (a delete whose key was not destroyed yet) is among it.
   */
  readonly onEndedInCatchUp?: ErasedKey;
  /**
   * A catch-up of at least SHARDED_FOLD_RECORDS records at start is folded by foldLog, sharded
   * across this many threads when it starts from an empty model on a file log (absent: the follow
   * loop folds everything itself).
   */
  readonly foldThreads?: number;
  /** How long to wait before following again after the log failed. */
  readonly retryDelayMs?: number;
  readonly now?: () => number;
  /** The events this process encoded for its appends (a new table unless given). */
  readonly encoded?: EncodedEvents;
}

export interface ProjectorProgress {
  readonly cursor: Cursor;
  /** Records applied by this projector (not those that came from a snapshot). */
  readonly applied: number;
  readonly invalid: number;
}

/** How often a long catch-up logs its progress. */
const CATCH_UP_REPORT_MS = 2000;

export class Projector {
  readonly model: ReadModel;
  /** The events this process encoded, so that its own appends handed back are folded without parsing them. */
  readonly encoded: EncodedEvents;
  readonly health: ProjectionHealth;
  private readonly options: ProjectorOptions;
  /** Writers waiting for their record to be applied (read-your-writes). */
  private readonly recordWaiters = new RecordWaiters();
  /** Readers waiting for the model to catch up with a head (fresh answers). */
  private readonly catchUpWaiters = new CatchUpWaiters();
  private readonly abort = new AbortController();
  private readonly readyTarget: Promise<void>;
  private markReady: () => void = () => undefined;
  private isReady = false;
  private readonly recordsAtStart: number;
  private startedAtMs = 0;
  private lastCatchUpReportMs = 0;
  private running: Promise<void> | undefined;
  private unsubscribe: () => void = () => undefined;
  /** Told the records applied, in the order applied (the feed's live part). */
  private readonly appliedListeners = new CommitListeners();

  constructor(options: ProjectorOptions) {
    this.options = options;
    this.model = options.model ?? createReadModel();
    this.encoded = options.encoded ?? new EncodedEvents();
    this.health = options.health ?? new ProjectionHealth(10_000, options.now);
    this.recordsAtStart = this.model.counts.records;
    this.readyTarget = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  private get now(): number {
    return this.options.now === undefined ? performance.now() : this.options.now();
  }

  /** Starts following; `caughtUp()` resolves once the log head seen now has been applied. */
  start(): void {
    if (this.running) return;
    // This process's own appends are folded the moment they are durable, before their writers
    // hear back, so a writer finds its record applied and never waits for the follow loop.
    const { log } = this.options;
    if (hasCommitFeed(log)) this.unsubscribe = log.onCommit((records) => this.applyHandedOver(records));
    this.running = this.run();
  }

  /** Resolves when the read model has caught up with the log head seen at start. */
  caughtUp(): Promise<void> {
    return this.readyTarget;
  }

  isCaughtUp(): boolean {
    return this.isReady;
  }

  progress(): ProjectorProgress {
    return {
      cursor: new Map(this.model.cursor),
      applied: this.model.counts.records - this.recordsAtStart,
      invalid: this.model.counts.invalid,
    };
  }

  private async run(): Promise<void> {
    const retryDelayMs = this.options.retryDelayMs ?? 1000;
    this.startedAtMs = this.now;
    this.lastCatchUpReportMs = this.startedAtMs;
    const target = await this.headWithRetry(retryDelayMs);
    await this.catchUpOnThreads(target);
    this.checkCaughtUp(target);
    const onGap = (gap: LogGap) => this.pass(gap, target);
    while (!this.abort.signal.aborted) {
      try {
        for await (const batch of this.options.log.followBatches(this.model.cursor, {
          signal: this.abort.signal,
          onGap,
        })) {
          this.applyBatch(batch, false);
          if (!this.isReady) this.checkCaughtUp(target);
        }
        // follow ended without our abort (e.g. the log was closed): wait before following again,
        // or this loop would spin without ever yielding.
        if (!this.abort.signal.aborted) await pause(retryDelayMs, this.abort.signal);
      } catch (error) {
        if (this.abort.signal.aborted) break;
        this.options.logger.warn({ err: error }, 'following the event log failed; retrying');
        await pause(retryDelayMs, this.abort.signal);
      }
    }
  }

  private async headWithRetry(retryDelayMs: number): Promise<Cursor> {
    while (!this.abort.signal.aborted) {
      try {
        return await this.options.log.head();
      } catch (error) {
        this.options.logger.error({ err: error }, 'cannot read the head of the event log; retrying');
        await pause(retryDelayMs, this.abort.signal);
      }
    }
    return new Map();
  }

  /**
   * A long catch-up at start, by foldLog (on several threads when it can), until `target`. Its
   * records settle no waiter: writes are refused until the model has caught up, so none of them
   * was written by a request of this process.
   */
  private async catchUpOnThreads(target: Cursor): Promise<void> {
    const threads = this.options.foldThreads;
    if (threads === undefined || cursorLag(this.model.cursor, target) < SHARDED_FOLD_RECORDS) return;
    let reported = this.model.counts.records;
    try {
      await foldLog(this.options.log, this.model, {
        to: target,
        signal: this.abort.signal,
        threads,
        ...(this.options.onEndedInCatchUp ? { onEnded: this.options.onEndedInCatchUp } : {}),
        onSkipped: (position, reason) => this.skipped(position, reason),
        onProgress: ({ records, lastTimestampMs }) => {
          this.health.applied(lastTimestampMs);
          this.options.onApplied?.(records - reported);
          reported = records;
          this.reportCatchUp(target, records);
        },
        onThreadsFailed: (error) =>
          this.options.logger.warn(
            { err: error, threads },
            'the catch-up could not fold on threads; folding on this one (slower)',
          ),
      });
    } catch (error) {
      // The follow loop goes on from wherever this got to.
      if (!this.abort.signal.aborted)
        this.options.logger.error({ err: error }, 'the catch-up at start failed; following the log instead');
    }
  }

  private skipped({ partition, offset }: LogPosition, reason: string): void {
    this.options.logger.warn({ partition, offset, reason }, 'skipped a record that is not a valid report event');
  }

  private settle(record: LogRecord, applied: Applied): void {
    if (applied.kind === 'invalid') this.skipped(record.position, applied.reason);
    this.recordWaiters.settle(record.position, applied.kind);
  }

  /** The hand-off runs inside the log's acknowledgement: a failure here must not fail writes that are durable. */
  private applyHandedOver(records: readonly LogRecord[]): void {
    try {
      this.applyBatch(records, true);
    } catch (error) {
      // The follow loop brings whatever was not folded, from the cursor on.
      this.options.logger.error(
        { err: error },
        'folding records handed over by the log failed; following the log for them',
      );
    }
  }

  /**
   * Folds the records that are next in line: a record the cursor has passed (a followed batch read
   * before a hand-off moved the cursor) is skipped, and so is a handed-over one beyond the cursor
   * (records before it are not folded yet: the follow loop brings it in order).
   */
  private applyBatch(batch: readonly LogRecord[], handedOver: boolean): void {
    const { model, options } = this;
    let applied = 0;
    let last: LogRecord | undefined;
    /** The records applied, once one of the batch was skipped (until then: the batch so far). */
    let some: LogRecord[] | undefined;
    for (let index = 0; index < batch.length; index += 1) {
      const record = batch[index] as LogRecord;
      const { partition, offset } = record.position;
      const next = model.cursor.get(partition) ?? 0;
      if (offset < next || (handedOver && offset > next)) {
        some ??= batch.slice(0, index);
        continue;
      }
      this.settle(
        record,
        applyRecord(
          model,
          record,
          this.encoded.eventOf(record.value),
          this.isReady ? options.onErased : options.onEndedInCatchUp,
        ),
      );
      applied += 1;
      last = record;
      some?.push(record);
    }
    if (last === undefined) return;
    this.health.applied(last.timestampMs);
    this.catchUpWaiters.moved(model.cursor);
    options.onApplied?.(applied);
    this.appliedListeners.notify(() => some ?? batch);
  }

  /**
   * `listener` is told, synchronously, the records of every batch the projector applies from now
   * on, in the order applied (every partition's records in offset order, each once), but for those
   * a catch-up at start folds on threads (before `isCaughtUp()`). Returns the unsubscribe function.
   */
  onRecordsApplied(listener: CommitListener): () => void {
    return this.appliedListeners.add(listener);
  }

  private checkCaughtUp(target: Cursor): void {
    if (this.isReady) return;
    if (!cursorReached(this.model.cursor, target)) {
      this.reportCatchUp(target);
      return;
    }
    this.isReady = true;
    const seconds = (this.now - this.startedAtMs) / 1000;
    this.options.logger.info(
      { applied: this.progress().applied, reports: this.model.reports.size, seconds },
      'read model caught up with the event log',
    );
    this.health.caughtUp();
    this.markReady();
    this.options.onCaughtUp?.();
  }

  /** A long catch-up (a big log, no snapshot) says how far it is every few seconds. */
  /** `records`: the model's count by now (a sharded fold moves the cursor only when it is done). */
  private reportCatchUp(target: Cursor, records = this.model.counts.records): void {
    const now = this.now;
    if (now - this.lastCatchUpReportMs < CATCH_UP_REPORT_MS) return;
    this.lastCatchUpReportMs = now;
    const total = cursorTotal(target);
    // Kafka offsets include records that hold nothing (transaction markers): the cursor says more, when it moved.
    const done = Math.max(total - cursorLag(this.model.cursor, target), Math.min(total, records));
    const rate = Math.round((records - this.recordsAtStart) / Math.max(0.001, (now - this.startedAtMs) / 1000));
    this.options.logger.info(
      { done, total, eventsPerSecond: rate, etaSeconds: Math.round((total - done) / Math.max(1, rate)) },
      'catching up with the event log',
    );
  }

  private pass(gap: LogGap, target: Cursor): void {
    if (!passGap(this.model, gap)) return;
    this.catchUpWaiters.moved(this.model.cursor);
    if (!this.isReady) this.checkCaughtUp(target);
  }

  /** Resolves with what the record at `position` did, once the read model has applied it. */
  waitFor(position: LogPosition, timeoutMs: number): Promise<Outcome> {
    if (cursorPassed(this.model.cursor, position)) return Promise.resolve(this.recordWaiters.outcomeOf(position));
    return this.recordWaiters.wait(position, timeoutMs);
  }

  /** Resolves once the read model has applied everything before `target` (ProjectionTimeoutError after `timeoutMs`). */
  reach(target: Cursor, timeoutMs: number): Promise<void> {
    return this.catchUpWaiters.wait(this.model.cursor, target, timeoutMs);
  }

  /** Stops following; writers still waiting get a ProjectionTimeoutError rather than waiting forever. */
  async stop(): Promise<void> {
    this.unsubscribe();
    this.abort.abort();
    this.recordWaiters.rejectAll();
    this.catchUpWaiters.rejectAll();
    await this.running;
  }
}
