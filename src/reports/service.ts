// The command side: decide on the projected state -> append -> wait until the local projection
// has applied our record -> answer from the projected state.
import type { SpanContext } from '@opentelemetry/api';
import type { AuthContext } from '../../projections/events.js';
import type { StoredReport } from '../../projections/reports.js';
import type { KeyId } from '../keys/key-store.js';
import type { Ended } from '../read-model/read-model.js';
import type { UnerasedDeletion } from '../keys/deletion-records.js';
import { createContentOpener, type ContentOpener } from './report-content.js';
import { RequestErasures } from './request-erasures.js';
import { createReportReader, type ReadAnswer, type ReadReport } from './report-reader.js';
import { createReportCreator, type CreateReport } from './report-creator.js';
import { createReportDeleter, type DeleteReport } from './report-deleter.js';
import { NO_PRECONDITIONS, type CreateCommand, type Preconditions } from './decide.js';
import type { ReportServiceOptions } from './service-options.js';
import { WriteSteps } from './write-steps.js';

export type { ReportServiceOptions } from './service-options.js';
export { MAX_DECISIONS } from './write-steps.js';

export class ReportService {
  private readonly clockMs: () => number;
  private readonly opener: ContentOpener;
  private readonly erasures: RequestErasures;
  /** What the create and delete commands share: the queue, readiness tickets, state, write and erasures. */
  private readonly steps: WriteSteps;
  private readonly creator: CreateReport;
  private readonly deleter: DeleteReport;
  private readonly reader: ReadReport;

  constructor(options: ReportServiceOptions) {
    this.clockMs = options.clockMs ?? (() => performance.now());
    this.opener = createContentOpener(options.keys, options.logger);
    this.erasures = new RequestErasures(options.keys, options.logger, options.onKeysErased);
    const steps = new WriteSteps(options, this.clockMs, this.erasures);
    this.steps = steps;
    this.creator = createReportCreator(steps, this.opener);
    this.deleter = createReportDeleter(steps);
    this.reader = createReportReader({
      opener: this.opener,
      writeTimeoutMs: options.writeTimeoutMs,
      clockMs: this.clockMs,
      readyState: (deadline) => steps.readyState(deadline),
      caughtUpWith: (id, deadline) => steps.caughtUpWith(id, deadline),
      answerTo: (error, id) => steps.answerTo(error, id),
    });
  }

  /** Whether writes are answered 503 lately and none is confirmed (for /readyz). */
  writesFailing(): boolean {
    return this.steps.outcomes.failing(this.clockMs());
  }

  /**
   * Creates the report, or returns the existing one for an identical retry. With an idempotency
   * key, a request seen before gets its first answer again, and another request with the key a 422.
   * `traceContext` (the request's traceparent) and `auth` (who asks: the CloudEvents authcontext)
   * are carried into the event it writes. `preconditions` (If-Match, If-None-Match) are evaluated
   * after the key, before the content is compared: a retry with a key seen before is the same
   * request, and gets the first answer whatever they say now. `readable`: whether the caller may
   * read reports (its token's scope read); without it, an existing report's content is never
   * compared with the request's, so a create of an existing id is 409 whatever its body (a retry
   * is recognised by its Idempotency-Key only). (report-creator.ts)
   */
  create(
    command: CreateCommand,
    idempotencyKey?: string,
    traceContext?: SpanContext,
    preconditions: Preconditions = NO_PRECONDITIONS,
    auth?: AuthContext,
    readable = true,
  ): Promise<StoredReport> {
    return this.creator(command, idempotencyKey, traceContext, preconditions, auth, readable);
  }

  /**
   * Deletes the report. With If-Match, the event names the version the condition matched as its
   * `expectedversion`: if another write takes effect first, the fold voids it, and the request is
   * decided again on the state that holds that write, where a version named by If-Match no longer
   * is the report's (versions only grow): 412, or 404 when the other write deleted it. `auth` (who
   * asks) goes into the event as its authcontext, as for a create. (report-deleter.ts)
   */
  delete(
    id: string,
    idempotencyKey?: string,
    traceContext?: SpanContext,
    preconditions: Preconditions = NO_PRECONDITIONS,
    auth?: AuthContext,
  ): Promise<void> {
    return this.deleter(id, idempotencyKey, traceContext, preconditions, auth);
  }

  /** The report and its version (GET): see report-reader.ts. */
  read(id: string, preconditions: Preconditions = NO_PRECONDITIONS): Promise<ReadAnswer> {
    return this.reader(id, preconditions);
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
}
