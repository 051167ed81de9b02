// The command side: decide on the projected state -> append -> wait until the local projection
// has applied our record -> answer from the projected state.
import type { SpanContext, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { AuthContext, ReportEvent } from '../../projections/events.js';
import type { ReportsView, StoredReport } from '../../projections/reports.js';
import type { ContentKey, KeyId, KeyStore } from '../keys/key-store.js';
import type { Ended } from '../read-model/read-model.js';
import { deletionOf, type Deletion, type UnerasedDeletion } from '../keys/deletion-records.js';
import { createContentOpener, type ContentOpener } from './report-content.js';
import { RequestErasures, SweepUnfinishedError } from './request-erasures.js';
import { tookEffect } from './unknown-outcome.js';
import { createReportReader, type ReadAnswer, type ReadReport } from './report-reader.js';
import { UnavailableError } from '../errors.js';
import { AppendOutcomeUnknownError, type EventLog, type LogPosition } from '../log/event-log.js';
import { beforeDeadline } from '../log/settle-within.js';
import {
  answerToFailure,
  conflict,
  createdThenDeleted,
  deleteAnswer,
  keyMismatch,
  notFound,
  preconditionFailed,
  unconfirmed,
} from './answers.js';
import type { Outcome, Projector } from '../projector/projector.js';
import {
  answerReplayedCreate,
  bareView,
  decideCreate,
  decideDelete,
  decideKey,
  NO_PRECONDITIONS,
  sameReport,
  storedReport,
  type CreateCommand,
  type KeyDecision,
  type Preconditions,
  type ReportView,
} from './decide.js';
import { reportDeleted, type EnvelopeContext } from './envelope.js';
import { sealedCreate, type CreateToSeal } from './sealed-create.js';
import { KeyedQueue, queueKeys } from './keyed-queue.js';
import { WriteOutcomes, type WriteTicket } from './write-outcomes.js';
import { createWriteTracing, defaultTracer, parentContext, type WriteTracing } from './tracing.js';
import { hasKeyedHeads } from '../log/capabilities.js';

export interface ReportServiceOptions extends EnvelopeContext {
  readonly log: EventLog;
  /** Where the keys that seal names and tags live (src/keys/). */
  readonly keys: KeyStore;
  readonly projector: Projector;
  readonly writeTimeoutMs: number;
  readonly logger: Logger;
  /** Called with the duration of every successful append (metrics). */
  readonly onAppend?: (durationMs: number) => void;
  /** Called for every write decided again after its event was void (an extra append; metrics). */
  readonly onDecidedAgain?: () => void;
  /** Called for every read of a partition's head before an answer that writes nothing (metrics). */
  readonly onHeadRead?: () => void;
  /** Spans around appends and read-your-writes waits (default: the global OpenTelemetry tracer, a no-op without an SDK). */
  readonly tracer?: Tracer;
  /** Called with the keys destroyed, once the store confirms it (the feeds: feed-hub.ts `erased`). */
  readonly onKeysErased?: (ids: readonly KeyId[]) => void;
  /** A monotonic clock in milliseconds for deadlines (tests may pass a fake one). */
  readonly clockMs?: () => number;
}

/**
 * Decisions a write may take: the first, and again after each void event (each means another write
 * to the report reached the log first, between the state decided on and this write's event).
 */
export const MAX_DECISIONS = 4;

export class ReportService {
  private readonly queue = new KeyedQueue();
  private readonly outcomes = new WriteOutcomes();
  private readonly tracing: WriteTracing;
  private readonly clockMs: () => number;
  private readonly opener: ContentOpener;
  private readonly erasures: RequestErasures;
  private readonly reader: ReadReport;

  constructor(private readonly options: ReportServiceOptions) {
    this.tracing = createWriteTracing(options.tracer ?? defaultTracer());
    this.clockMs = options.clockMs ?? (() => performance.now());
    this.opener = createContentOpener(options.keys, options.logger);
    this.erasures = new RequestErasures(options.keys, options.logger, options.onKeysErased);
    this.reader = createReportReader({
      opener: this.opener,
      writeTimeoutMs: options.writeTimeoutMs,
      clockMs: this.clockMs,
      readyState: (deadline) => this.readyState(deadline),
      caughtUpWith: (id, deadline) => this.caughtUpWith(id, deadline),
      answerTo: (error, id) => this.answerTo(error, id),
    });
  }

  /** Whether writes are answered 503 lately and none is confirmed (for /readyz). */
  writesFailing(): boolean {
    return this.outcomes.failing(this.clockMs());
  }

  /** Milliseconds left before `deadline`, at least 1 (a request past it is refused before it gets here). */
  private remaining(deadline: number): number {
    return Math.max(1, deadline - this.clockMs());
  }

  /**
   * Creates the report, or returns the existing one for an identical retry. With an idempotency
   * key, a request seen before gets its first answer again, and another request with the key a 422.
   * `traceContext` (the request's traceparent) and `auth` (who asks: the CloudEvents authcontext)
   * are carried into the event it writes. `preconditions` (If-Match, If-None-Match) are evaluated
   * after the key, before the content is compared: a retry with a key seen before is the same
   * request, and gets the first answer whatever they say now.
   */
  create(
    command: CreateCommand,
    idempotencyKey?: string,
    traceContext?: SpanContext,
    preconditions: Preconditions = NO_PRECONDITIONS,
    auth?: AuthContext,
  ): Promise<StoredReport> {
    const deadline = this.clockMs() + this.options.writeTimeoutMs;
    const { id } = command;
    return this.tracked((ticket) =>
      this.queue.run(queueKeys(id, idempotencyKey), async () => {
        const state = this.readyState(deadline);
        for (let decisions = 1; ; decisions += 1) {
          const keyed = decideKey(this.options.projector.model.keys, idempotencyKey, { op: 'create', id });
          if (keyed.kind !== 'new') return this.replayCreate(keyed, state, command);
          let decision = decideCreate(await this.view(state, id), command, preconditions);
          // An answer that writes nothing must not come from state older than the request. (After a
          // void write it does not: the state holds everything before that write's own event.)
          if (decisions === 1 && decision.kind !== 'append' && (await this.caughtUpWith(id, deadline)))
            decision = decideCreate(await this.view(state, id), command, preconditions);
          if (decision.kind === 'unchanged') return decision.report;
          if (decision.kind === 'conflict') throw conflict(id);
          if (decision.kind === 'precondition-failed') throw preconditionFailed(id, decision.failed);
          this.beforeWriteAgain(id, decisions, deadline);
          const { event, key } = await this.sealedCreate(
            { id, report: storedReport(command), idempotencyKey, expectedVersion: decision.expectedVersion, auth },
            deadline,
          );
          const outcome = await this.write(event, deadline, traceContext, key);
          // Decided on a state other writes had moved on from by the time the event reached the log
          // (another instance's, not yet folded here): its key is destroyed (the event can never take
          // effect), and the request decided again on the state that now holds those writes.
          if (outcome === 'void') {
            // The log and the fold took it: for readiness it counts unless the request ends in a 503.
            this.outcomes.voided(ticket);
            await this.erase([key.id], id, deadline);
            continue;
          }
          this.outcomes.confirmed(ticket);
          if (idempotencyKey !== undefined)
            return this.replayCreate(
              decideKey(this.options.projector.model.keys, idempotencyKey, { op: 'create', id }),
              state,
              command,
            );
          if (outcome === 'created') return storedReport(command);
          // The outcome is no longer remembered (rare): the state says whether the report is this one.
          const projected = (await this.view(state, id)).content;
          if (projected !== undefined && sameReport(projected, command)) return projected;
          throw unconfirmed(id);
        }
      }),
    );
  }

  /**
   * Deletes the report. With If-Match, the event names the version the condition matched as its
   * `expectedversion`: if another write takes effect first, the fold voids it, and the request is
   * decided again on the state that holds that write, where a version named by If-Match no longer
   * is the report's (versions only grow): 412, or 404 when the other write deleted it. `auth` (who
   * asks) goes into the event as its authcontext, as for a create.
   */
  delete(
    id: string,
    idempotencyKey?: string,
    traceContext?: SpanContext,
    preconditions: Preconditions = NO_PRECONDITIONS,
    auth?: AuthContext,
  ): Promise<void> {
    const deadline = this.clockMs() + this.options.writeTimeoutMs;
    return this.tracked((ticket) =>
      this.queue.run(queueKeys(id, idempotencyKey), async () => {
        const state = this.readyState(deadline);
        // An erasure of its deletion still unconfirmed is written first (request-erasures.ts).
        const waiting = this.erasures.waitingOf(id, this.remaining(deadline));
        if (waiting !== undefined) await waiting;
        for (let decisions = 1; ; decisions += 1) {
          const keyed = decideKey(this.options.projector.model.keys, idempotencyKey, { op: 'delete', id });
          if (keyed.kind !== 'new') {
            await this.erasedBeforeNoWrite(id, ticket, deadline);
            return deleteAnswer(id, keyed);
          }
          let decision = decideDelete(bareView(state, id), preconditions);
          // A 404 or 412 must not come from state older than the request (nor does it after a void write).
          if (decisions === 1 && decision.kind !== 'append' && (await this.caughtUpWith(id, deadline)))
            decision = decideDelete(bareView(state, id), preconditions);
          if (decision.kind === 'not-found') {
            await this.erasedBeforeNoWrite(id, ticket, deadline);
            throw notFound(id);
          }
          if (decision.kind === 'precondition-failed') throw preconditionFailed(id, decision.failed);
          this.beforeWriteAgain(id, decisions, deadline);
          // The key of the incarnation this delete ends (none for content written in the clear).
          const live = state.get(id);
          const data = idempotencyKey === undefined ? { id } : { id, idempotencyKey };
          const outcome = await this.write(
            reportDeleted(this.options, data, decision.expectedVersion, auth),
            deadline,
            traceContext,
          );
          // Void: the log and the fold took it (for readiness it counts unless the request ends in a 503); decided again.
          if (outcome === 'void') {
            this.outcomes.voided(ticket);
            continue;
          }
          // Deleted: its content is erased, and the deletion recorded, before the answer says so.
          if (outcome === 'deleted') await this.erase(deletionOf(id, decision.expectedVersion, live), id, deadline);
          // Confirmed once erased: a delete answered 503 for its key counts against readiness.
          this.outcomes.confirmed(ticket);
          if (idempotencyKey !== undefined)
            return deleteAnswer(id, decideKey(this.options.projector.model.keys, idempotencyKey, { op: 'delete', id }));
          return;
        }
      }),
    );
  }

  /** The report and its version (GET): see report-reader.ts. */
  read(id: string, preconditions: Preconditions = NO_PRECONDITIONS): Promise<ReadAnswer> {
    return this.reader(id, preconditions);
  }

  /** The report as a decision reads it; its content opened only when it is live (a create of an id that exists). */
  private view(state: ReportsView, id: string): Promise<ReportView> | ReportView {
    return state.has(id) ? this.opener.view(state, id) : bareView(state, id);
  }

  /** A retry of a keyed create: the first answer again, compared with the report its key points at. */
  private async replayCreate(keyed: KeyDecision, state: ReportsView, command: CreateCommand): Promise<StoredReport> {
    if (keyed.kind !== 'replay') throw keyMismatch();
    const answer = answerReplayedCreate(keyed.request, await this.view(state, command.id), command);
    if (answer.kind === 'unchanged') return answer.report;
    if (answer.kind === 'conflict') throw conflict(command.id);
    if (answer.kind === 'deleted-since') throw createdThenDeleted(command.id);
    throw keyMismatch();
  }

  private async sealedCreate(create: CreateToSeal, deadline: number): Promise<{ event: ReportEvent; key: ContentKey }> {
    try {
      return await sealedCreate(this.options, create, this.remaining(deadline));
    } catch (error) {
      throw this.answerTo(error, create.id);
    }
  }

  private erase(what: readonly KeyId[] | Deletion, id: string, deadline: number): Promise<void> {
    return this.erasures.beforeAnswer(what, id, this.remaining(deadline));
  }

  /** Erases in the background what an event another writer wrote ends (read-model.ts Ended). */
  eraseLater(ended: Ended): void {
    this.erasures.later(ended);
  }

  /** The start's sweep of keys a crash left behind is under way: deletes answered without a write wait for it. */
  sweeping(sweep: Promise<unknown>): void {
    this.erasures.sweeping(sweep);
  }

  /** Destroys the keys in the background (the key topic's sweep). */
  eraseKeysLater(ids: readonly KeyId[]): void {
    this.erasures.laterKeys(ids);
  }

  /** The deletions whose keys are not confirmed destroyed yet (the server's snapshots list them). */
  unconfirmedDeletions(): UnerasedDeletion[] {
    return this.erasures.unconfirmed();
  }

  /** Keys whose destruction is still being tried again (for /metrics). */
  erasuresPending(): number {
    return this.erasures.pending();
  }

  /** Whether the start's sweep of keys.db failed and waits to be tried again (for /metrics). */
  keySweepFailing(): boolean {
    return this.erasures.sweepFailing();
  }

  /** Live reports whose content could not be opened since start (a missing key; for /metrics). */
  contentUnopened(): number {
    return this.opener.unopened();
  }

  /** Stops the background work (key destructions tried again): at shutdown. */
  stop(): void {
    this.erasures.stop();
  }

  /**
   * Before a write decided again: refused past the deadline, or once MAX_DECISIONS writes in a row
   * were void (other writes to the report keep landing first; a retry is safe, nothing took effect).
   */
  private beforeWriteAgain(id: string, decisions: number, deadline: number): void {
    if (decisions === 1) return;
    if (decisions > MAX_DECISIONS)
      throw new UnavailableError(
        `other writes to report ${id} took effect before each of this request's ${MAX_DECISIONS} attempts; none of them changed anything, and retrying is safe`,
      );
    this.readyState(deadline);
    this.options.onDecidedAgain?.();
  }

  /** Runs a write request, telling the outcomes when it began and how it ended (a long wait counts before its 503). */
  private erasedBeforeNoWrite(id: string, ticket: WriteTicket, deadline: number): Promise<void> {
    return this.erasures.beforeNoWrite(
      id,
      () => this.remaining(deadline),
      () => this.outcomes.finished(ticket),
    );
  }

  private async tracked<T>(request: (ticket: WriteTicket) => Promise<T>): Promise<T> {
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

  /**
   * Waits until the projection holds everything written for `id` (by any instance) before now.
   * Returns false when the log has no other writer, so the state is fresh already.
   */
  private async caughtUpWith(id: string, deadline: number): Promise<boolean> {
    const { log, projector } = this.options;
    if (!hasKeyedHeads(log)) return false;
    this.options.onHeadRead?.();
    try {
      // The head read is bounded by the deadline too: its broker may be the one that stopped answering.
      const target = await beforeDeadline(log.latest(id), this.remaining(deadline));
      await projector.reach(target, this.remaining(deadline));
      return true;
    } catch (error) {
      throw this.answerTo(error, id);
    }
  }

  private readyState(deadline: number) {
    if (this.clockMs() >= deadline)
      throw new UnavailableError('the request waited too long behind others for the same report; retry');
    if (!this.options.projector.isCaughtUp())
      throw new UnavailableError('the read model is still catching up with the event log; retry shortly');
    return this.options.projector.model.reports;
  }

  private async write(
    event: ReportEvent,
    deadline: number,
    traceContext: SpanContext | undefined,
    contentKey?: ContentKey,
  ): Promise<Outcome> {
    const started = this.clockMs();
    const parent = parentContext(traceContext);
    try {
      const append = (traced: ReportEvent) => {
        // Encoded through the projector's table: when the log hands these bytes back, it folds the event unparsed.
        // The log settles the append by the deadline itself (one shared timer, no per-request signal).
        const value = this.options.projector.encoded.encode(traced);
        const message =
          contentKey === undefined ? { key: traced.subject, value } : { key: traced.subject, value, contentKey };
        return this.options.log.append([message], { timeoutMs: this.remaining(deadline) });
      };
      const [position] = await this.tracing.append(parent, event, append);
      this.options.onAppend?.(this.clockMs() - started);
      return await this.tracing.wait(parent, () =>
        this.options.projector.waitFor(position as LogPosition, this.remaining(deadline)),
      );
    } catch (error) {
      if (error instanceof AppendOutcomeUnknownError) {
        const found = await tookEffect(event, {
          log: this.options.log,
          projector: this.options.projector,
          remainingMs: () => deadline - this.clockMs(),
        });
        if (found) return 'created';
      }
      throw this.answerTo(error, event.subject);
    }
  }

  /** Maps a failure of the log or of the projection to the answer the client gets. */
  private answerTo(error: unknown, subject: string): unknown {
    return answerToFailure(error, subject, this.options.writeTimeoutMs, this.options.logger);
  }
}
