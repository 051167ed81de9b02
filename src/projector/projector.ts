// Folds every record of the log into the read model with applyRecord, from the model's cursor on:
// the records this process appends as the log hands them over once durable (a CommitFeed), everything
// else (other writers, the history at start) by following the log. Lets writers wait until their
// own record has been applied (read-your-writes) or until the model has reached a position (fresh
// answers). What it applies it tells a ProjectionHealth; snapshots and readiness are other
// modules' business.
import { CatchUpWaiters } from './catch-up-waiters.js';
import {
  cursorPassed,
  cursorReached,
  type Cursor,
  type LogGap,
  type LogPosition,
  type LogRecord,
} from '../log/event-log.js';
import { outcomeOf, RecordWaiters, type Outcome } from './record-waiters.js';
import { OwnCreates } from './own-creates.js';
import { EncodedEvents } from './encoded-events.js';
import { pause } from '../pause.js';
import { ProjectionHealth } from './health.js';
import { applyRecord, createReadModel, passGap, type Applied, type ReadModel } from '../read-model/read-model.js';
import { catchUpOnThreads, headWithRetry } from './catch-up-at-start.js';
import { CatchUpProgress } from './catch-up-progress.js';
import type { ProjectorOptions, ProjectorProgress } from './projector-options.js';
import { CommitListeners, hasCommitFeed, type CommitListener } from '../log/capabilities.js';

export { ProjectionTimeoutError } from './projection-timeout.js';
export type { Outcome } from './record-waiters.js';
export type { ProjectorOptions, ProjectorProgress } from './projector-options.js';

export class Projector {
  readonly model: ReadModel;
  /** The events this process encoded, so that its own appends handed back are folded without parsing them. */
  readonly encoded: EncodedEvents;
  readonly health: ProjectionHealth;
  private readonly options: ProjectorOptions;
  /** Writers waiting for their record to be applied (read-your-writes). */
  private readonly recordWaiters = new RecordWaiters();
  /** This process's creates in flight, told when one takes effect (own-creates.ts). */
  readonly ownCreates = new OwnCreates();
  /** Readers waiting for the model to catch up with a head (fresh answers). */
  private readonly catchUpWaiters = new CatchUpWaiters();
  private readonly abort = new AbortController();
  private readonly readyTarget: Promise<void>;
  private markReady: () => void = () => undefined;
  private markRefused: (error: Error) => void = () => undefined;
  private isReady = false;
  /** The start's checks of what the catch-up folded failed (beforeReady): never ready. */
  private refusedReady = false;
  private readonly recordsAtStart: number;
  /** Says in the log how far the catch-up at start is, and when it is done. */
  private readonly catchUpProgress: CatchUpProgress;
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
    this.catchUpProgress = new CatchUpProgress(options.logger, this.recordsAtStart, options.now);
    this.readyTarget = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.markRefused = reject;
    });
    // A refusal (beforeReady) rejects caughtUp() for whoever waits; none waiting is no unhandled rejection.
    this.readyTarget.catch(() => undefined);
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

  /** Resolves when the read model has caught up with the log head seen at start; rejects when beforeReady refused it. */
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
    this.catchUpProgress.started();
    const target = await headWithRetry(this.options, this.abort.signal, retryDelayMs);
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

  /** The long catch-up at start (catch-up-at-start.ts); the follow loop goes on from where it got to. */
  private async catchUpOnThreads(target: Cursor): Promise<void> {
    await catchUpOnThreads(target, this.options, {
      model: this.model,
      signal: this.abort.signal,
      health: this.health,
      progress: this.catchUpProgress,
      onSkipped: (position, reason) => this.skipped(position, reason),
    });
  }

  private skipped({ partition, offset }: LogPosition, reason: string): void {
    this.options.logger.warn({ partition, offset, reason }, 'skipped a record that is not a valid report event');
  }

  private settle(record: LogRecord, applied: Applied): void {
    if (applied.kind === 'invalid') this.skipped(record.position, applied.reason);
    this.ownCreates.applied(applied);
    this.recordWaiters.settle(record.position, outcomeOf(applied));
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
    if (this.isReady || this.refusedReady) return;
    if (!cursorReached(this.model.cursor, target)) {
      this.catchUpProgress.logProgress(this.model.cursor, target, this.model.counts.records);
      return;
    }
    const refused = this.options.beforeReady?.();
    if (refused !== undefined) {
      this.refusedReady = true;
      this.markRefused(refused);
      return;
    }
    this.isReady = true;
    this.catchUpProgress.logCaughtUp(this.progress().applied, this.model.reports.size);
    this.health.caughtUp();
    this.markReady();
    this.options.onCaughtUp?.();
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
