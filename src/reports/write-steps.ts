// The steps the create and delete commands share (report-creator.ts, report-deleter.ts), bound to
// one service: a queue per report and Idempotency-Key, each request's ticket for readiness
// (write-outcomes.ts), the state decisions read (projected-state.ts), the write itself
// (event-writer.ts), and the erasures an answer waits for (request-erasures.ts).
import type { ReportsView } from '../../projections/reports.js';
import type { Deletion } from '../keys/deletion-records.js';
import type { ContentKey, KeyId } from '../keys/key-store.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import { UnavailableError } from '../errors.js';
import { answerToFailure } from './answers.js';
import { createEventWriter, type WriteEvent } from './event-writer.js';
import { KeyedQueue } from './keyed-queue.js';
import { createProjectedState } from './projected-state.js';
import { SweepUnfinishedError, type RequestErasures } from './request-erasures.js';
import type { ReportServiceOptions } from './service-options.js';
import { createWriteTracing, defaultTracer } from './tracing.js';
import { WriteOutcomes, type WriteTicket } from './write-outcomes.js';

/**
 * Decisions a write may take: the first, and again after each void event (each means another write
 * to the report reached the log first, between the state decided on and this write's event).
 */
export const MAX_DECISIONS = 4;

export class WriteSteps {
  readonly queue = new KeyedQueue();
  readonly outcomes = new WriteOutcomes();
  /** The projected state; 503 past the deadline or while it catches up at start (projected-state.ts). */
  readonly readyState: (deadline: number) => ReportsView;
  /** Waits until the state holds everything written for `id` before now; false when the log has no other writer. */
  readonly caughtUpWith: (id: string, deadline: number) => Promise<boolean>;
  /** Appends an event and answers what the fold made of it (event-writer.ts). */
  readonly write: WriteEvent;

  constructor(
    readonly options: ReportServiceOptions,
    readonly clockMs: () => number,
    readonly erasures: RequestErasures,
  ) {
    const { log, projector } = options;
    const remaining = (deadline: number) => this.remaining(deadline);
    const answerTo = (error: unknown, subject: string) => this.answerTo(error, subject);
    const tracing = createWriteTracing(options.tracer ?? defaultTracer());
    const state = createProjectedState({
      log,
      projector,
      clockMs,
      remaining,
      onHeadRead: options.onHeadRead,
      answerTo,
    });
    this.readyState = state.readyState;
    this.caughtUpWith = state.caughtUpWith;
    this.write = createEventWriter({
      log,
      projector,
      tracing,
      clockMs,
      remaining,
      onAppend: options.onAppend,
      answerTo,
      // A key put before its event (a log that does not carry keys: Kafka) whose event the log
      // refused is used by nothing: destroyed now rather than at a later start's sweep. (A log that
      // carries keys never wrote it.)
      ...(hasKeyCarrier(log) ? {} : { onNeverAppended: (key: ContentKey) => erasures.laterKeys([key.id]) }),
    });
  }

  /** Milliseconds left before `deadline`, at least 1 (a request past it is refused before it gets here). */
  remaining(deadline: number): number {
    return Math.max(1, deadline - this.clockMs());
  }

  /**
   * Before a write decided again: refused past the deadline, or once MAX_DECISIONS writes in a row
   * were void (other writes to the report keep landing first; a retry is safe, nothing took effect).
   */
  beforeWriteAgain(id: string, decisions: number, deadline: number): void {
    if (decisions === 1) return;
    if (decisions > MAX_DECISIONS)
      throw new UnavailableError(
        `other writes to report ${id} took effect before each of this request's ${MAX_DECISIONS} attempts; none of them changed anything, and retrying is safe`,
      );
    this.readyState(deadline);
    this.options.onDecidedAgain?.();
  }

  erase(what: readonly KeyId[] | Deletion, id: string, deadline: number): Promise<void> {
    return this.erasures.beforeAnswer(what, id, this.remaining(deadline));
  }

  /** Before a delete's answer that writes nothing: see request-erasures.ts beforeNoWrite. */
  erasedBeforeNoWrite(id: string, ticket: WriteTicket, deadline: number): Promise<void> {
    return this.erasures.beforeNoWrite(
      id,
      () => this.remaining(deadline),
      () => this.outcomes.finished(ticket),
    );
  }

  /** Runs a write request, telling the outcomes when it began and how it ended (a long wait counts before its 503). */
  async tracked<T>(request: (ticket: WriteTicket) => Promise<T>): Promise<T> {
    const ticket = this.outcomes.started(this.clockMs());
    try {
      return await request(ticket);
    } catch (error) {
      if (error instanceof UnavailableError && !(error instanceof SweepUnfinishedError))
        this.outcomes.unconfirmed(ticket, this.clockMs());
      throw error;
    } finally {
      this.outcomes.finished(ticket);
    }
  }

  /** Maps a failure of the log or of the projection to the answer the client gets. */
  answerTo(error: unknown, subject: string): unknown {
    return answerToFailure(error, subject, this.options.writeTimeoutMs, this.options.logger);
  }
}
