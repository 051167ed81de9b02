// The command side: decide on the projected state -> append -> wait until the local projection
// has applied our record -> answer from the projected state.
import type { Logger } from 'pino';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { StoredReport } from '../../projections/reports.js';
import { ConflictError, NotFoundError, UnavailableError } from '../errors.js';
import { LogUnavailableError, type EventLog, type LogPosition } from '../log/event-log.js';
import { ProjectionTimeoutError, type Outcome, type Projector } from '../projector.js';
import { decideCreate, decideDelete, sameReport, type CreateCommand } from './decide.js';
import { reportCreated, reportDeleted, type EnvelopeContext } from './envelope.js';
import { KeyedQueue } from './keyed-queue.js';

export interface ReportServiceOptions extends EnvelopeContext {
  readonly log: EventLog;
  readonly projector: Projector;
  readonly writeTimeoutMs: number;
  readonly logger: Logger;
  /** Called with the duration of every successful append (metrics). */
  readonly onAppend?: (durationMs: number) => void;
}

class DeadlineExceeded extends Error {}

export class ReportService {
  private readonly queue = new KeyedQueue();

  constructor(private readonly options: ReportServiceOptions) {}

  /** Creates the report, or returns the existing one for an identical retry. */
  create(command: CreateCommand): Promise<StoredReport> {
    const deadline = Date.now() + this.options.writeTimeoutMs;
    return this.queue.run(command.id, async () => {
      const state = this.readyState(deadline);
      const decision = decideCreate(state, command);
      if (decision.kind === 'unchanged') return decision.report;
      if (decision.kind === 'conflict') throw conflict(command.id);
      const { id, name, tag } = command;
      await this.write(reportCreated(this.options, tag === undefined ? { id, name } : { id, name, tag }), deadline);
      // Another instance may have created the id first; the fold of the shared log decides.
      const projected = state.get(id);
      if (projected !== undefined && sameReport(projected, command)) return projected;
      throw conflict(id);
    });
  }

  delete(id: string): Promise<void> {
    const deadline = Date.now() + this.options.writeTimeoutMs;
    return this.queue.run(id, async () => {
      const state = this.readyState(deadline);
      if (decideDelete(state, id).kind === 'not-found') throw notFound(id);
      const outcome = await this.write(reportDeleted(this.options, { id }), deadline);
      // Void: another instance deleted it between our decision and our append.
      if (outcome === 'void') throw notFound(id);
    });
  }

  private readyState(deadline: number) {
    if (Date.now() >= deadline) throw new UnavailableError('the request waited too long behind others for the same report; retry');
    if (!this.options.projector.isCaughtUp()) throw new UnavailableError('the read model is still catching up with the event log; retry shortly');
    return this.options.projector.state;
  }

  private async write(event: ReportEvent, deadline: number): Promise<Outcome> {
    const started = Date.now();
    try {
      const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
      const [position] = await withDeadline(this.options.log.append([{ key: event.subject, value: encodeEvent(event) }], { signal }), deadline);
      this.options.onAppend?.(Date.now() - started);
      return await this.options.projector.waitFor(position as LogPosition, Math.max(1, deadline - Date.now()));
    } catch (error) {
      if (error instanceof LogUnavailableError) {
        // The adapter's message can name files or broker addresses: log it, never send it.
        this.options.logger.warn({ err: error, subject: event.subject }, 'append failed: the event log is unavailable');
        throw new UnavailableError('the event log is unavailable; retrying the same request is safe');
      }
      if (error instanceof DeadlineExceeded || error instanceof ProjectionTimeoutError || (error instanceof DOMException && error.name === 'TimeoutError')) {
        throw new UnavailableError(`the event log did not confirm the write within ${this.options.writeTimeoutMs} ms; retrying the same request is safe`);
      }
      throw error;
    }
  }
}

function conflict(id: string): ConflictError {
  return new ConflictError(`report ${id} already exists with a different name or tag`);
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`report ${id} does not exist`);
}

function withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineExceeded()), Math.max(0, deadline - Date.now()));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
