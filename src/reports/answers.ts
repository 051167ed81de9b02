// The answers the command side gives that are not a report: errors in the domain's words, each with
// its HTTP status (errors.ts), and what a failure of the log, the key store or the projection
// becomes for the client.
import type { Logger } from 'pino';
import {
  ConflictError,
  EventTooLargeError,
  NotFoundError,
  PreconditionFailedError,
  UnavailableError,
  UnopenedContentError,
  UnprocessableError,
} from '../errors.js';
import {
  AppendOutcomeUnknownError,
  AppendTimeoutError,
  LogOverloadedError,
  LogRefusingWritesError,
  LogUnavailableError,
  RecordTooLargeError,
} from '../log/event-log.js';
import { ProjectionTimeoutError } from '../projector/projector.js';
import type { FailedCondition, KeyDecision } from './decide.js';

export function keyMismatch(): UnprocessableError {
  return new UnprocessableError('this Idempotency-Key was already used for a different request');
}

export function deleteAnswer(id: string, decision: KeyDecision): void {
  if (decision.kind !== 'replay') throw keyMismatch();
  if (decision.request.outcome.kind === 'not-found') throw notFound(id);
  if (decision.request.outcome.kind !== 'deleted') throw keyMismatch();
}

/** A retry with the key of a create whose report has been deleted since: its content may be erased, and nothing is created again. */
export function createdThenDeleted(id: string): ConflictError {
  return new ConflictError(
    `the request with this Idempotency-Key created report ${id}, which has been deleted since; nothing was written (send a new request, with a new key, to create it again)`,
  );
}

export function conflict(id: string): ConflictError {
  return new ConflictError(`report ${id} already exists with a different name or tag`);
}

/** A create of an existing report by a caller that may not read it: the same answer whatever its body. */
export function existsUnread(id: string): ConflictError {
  return new ConflictError(
    `report ${id} already exists; a token without the scope read is not told whether its name and tag are the request's (a retry with the same Idempotency-Key is answered as the first request was)`,
  );
}

/** The log took the write, but what the fold did with it is no longer known here. */
export function unconfirmed(id: string): UnavailableError {
  return new UnavailableError(
    `the write of report ${id} reached the event log, but its outcome could not be confirmed; retrying the same request is safe`,
  );
}

export function notFound(id: string): NotFoundError {
  return new NotFoundError(`report ${id} does not exist`);
}

/** A precondition that does not hold: nothing was done, whatever the method. */
export function preconditionFailed(id: string, failed: FailedCondition): PreconditionFailedError {
  if (failed === 'if-match')
    return new PreconditionFailedError(
      `report ${id} is not at a version the If-Match header names (it has changed, or does not exist); nothing was done: read it again for its current ETag`,
    );
  return new PreconditionFailedError(
    `report ${id} exists at a version the If-None-Match header names (or the header is "*"); nothing was done`,
  );
}

/** A live report whose key is missing (another producer's event, a lost key): its content cannot be given. */
export function contentUnopened(id: string): UnopenedContentError {
  return new UnopenedContentError(
    `the content of report ${id} cannot be opened: its key is missing from the key store (an event of another producer, or a lost key); \`reports verify\` lists such reports`,
  );
}

/** Maps a failure of the log (or key store) or of the projection to the answer the client gets; logs what it must not send. */
export function answerToFailure(error: unknown, subject: string, writeTimeoutMs: number, logger: Logger): unknown {
  if (error instanceof RecordTooLargeError) return new EventTooLargeError(error.sizeBytes, error.limitBytes);
  if (error instanceof LogOverloadedError) {
    return new UnavailableError(
      `${error.maxPending} writes are already waiting for the event log (REPORTS_MAX_PENDING_APPENDS); retry shortly`,
      2,
    );
  }
  if (error instanceof LogRefusingWritesError) return new UnavailableError(error.message, 30);
  if (error instanceof LogUnavailableError) {
    // The adapter's message can name files or broker addresses: log it, never send it. A state the
    // log announced itself (a full disk) is not logged again for each write it refuses.
    if (!error.announced) logger.warn({ err: error, subject }, 'the event log is unavailable');
    return new UnavailableError('the event log is unavailable; retrying the same request is safe');
  }
  if (error instanceof AppendOutcomeUnknownError) {
    logger.warn({ err: error, subject }, 'the event log did not say whether it took a write');
    return new UnavailableError('the event log did not confirm the write; retrying the same request is safe');
  }
  if (error instanceof AppendTimeoutError || error instanceof ProjectionTimeoutError) {
    return new UnavailableError(
      `the event log did not confirm the write within ${writeTimeoutMs} ms; retrying the same request is safe`,
    );
  }
  return error;
}
