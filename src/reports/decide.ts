// The command side's decisions, pure: given what the store holds of a report and a request, what
// to do. Content is handed in opened (the service opens a sealed report's box with its key first,
// and only when the decision needs it: a create of an id that exists).
import type { KeyedRequest } from '../../projections/idempotency.js';
import type { ReportsView, StoredReport } from '../../projections/reports.js';

export interface CreateCommand {
  /** Canonical decimal form of the int64 id. */
  readonly id: string;
  readonly name: string;
  readonly tag?: string;
}

/**
 * What a decision reads of one report: its version (events that took effect on it; odd while it
 * is live) and, for a live report, its content when it could be opened (undefined when its key is
 * missing: the report exists, and what it holds cannot be compared).
 */
export interface ReportView {
  readonly version: number;
  readonly live: boolean;
  readonly content?: StoredReport;
}

/**
 * Write the event, decided on the report's version `expectedVersion` (the event names it, and the
 * fold voids the event if the report has moved on by the time it reaches the log).
 */
export interface AppendDecision {
  readonly kind: 'append';
  readonly expectedVersion: number;
}

/** A request's precondition on the report was false (HTTP 412): nothing is written. */
export interface PreconditionFailed {
  readonly kind: 'precondition-failed';
  /** The condition that failed. */
  readonly failed: FailedCondition;
}

export type FailedCondition = 'if-match' | 'if-none-match';

export type CreateDecision =
  | AppendDecision
  | { readonly kind: 'unchanged'; readonly report: StoredReport }
  | { readonly kind: 'conflict' }
  | PreconditionFailed;

export type DeleteDecision = AppendDecision | { readonly kind: 'not-found' } | PreconditionFailed;

/** A read: the report's version to answer with, its content still to be opened; or 304 (`not-modified`); or 404. */
export type ReadDecision =
  | { readonly kind: 'read'; readonly version: number }
  | { readonly kind: 'not-modified'; readonly version: number }
  | { readonly kind: 'not-found' }
  | PreconditionFailed;

/**
 * What a request asks of the report's version before it is carried out (HTTP If-Match and
 * If-None-Match, parsed by the shell: src/http/etag.ts). `any` (`*`): the report exists. `versions`:
 * it exists at one of these versions. Only a live report has a version a client can name (an
 * ETag is given for live reports only), so neither ever holds for an absent one.
 */
export type VersionCondition =
  { readonly kind: 'any' } | { readonly kind: 'versions'; readonly versions: readonly number[] };

export interface Preconditions {
  /** Carry the request out only if this holds (else 412). */
  readonly ifMatch?: VersionCondition;
  /** Carry the request out only if this does not hold (else 304 to a read, 412 to a write). */
  readonly ifNoneMatch?: VersionCondition;
}

export const NO_PRECONDITIONS: Preconditions = Object.freeze({});

// Decisions that carry nothing are shared constants: decided on every request, allocated once.
const NOT_FOUND: { readonly kind: 'not-found' } = Object.freeze({ kind: 'not-found' });
const CONFLICT: { readonly kind: 'conflict' } = Object.freeze({ kind: 'conflict' });
const NEW_KEY: { readonly kind: 'new' } = Object.freeze({ kind: 'new' });
const PRECONDITION_FAILED: Readonly<Record<FailedCondition, PreconditionFailed>> = Object.freeze({
  'if-match': Object.freeze({ kind: 'precondition-failed', failed: 'if-match' }),
  'if-none-match': Object.freeze({ kind: 'precondition-failed', failed: 'if-none-match' }),
});

export function sameReport(report: StoredReport, command: CreateCommand): boolean {
  return report.name === command.name && report.tag === command.tag;
}

/** Whether `condition` holds for the report as read. */
export function conditionHolds(report: Pick<ReportView, 'version' | 'live'>, condition: VersionCondition): boolean {
  if (!report.live) return false;
  return condition.kind === 'any' || condition.versions.includes(report.version);
}

/**
 * Which precondition fails, in RFC 9110's order (13.2.2: If-Match first, then If-None-Match), or
 * undefined when the request may go on. The date conditions are not evaluated: a report has no
 * modification date.
 */
export function failedPrecondition(
  report: Pick<ReportView, 'version' | 'live'>,
  { ifMatch, ifNoneMatch }: Preconditions,
): FailedCondition | undefined {
  if (ifMatch !== undefined && !conditionHolds(report, ifMatch)) return 'if-match';
  if (ifNoneMatch !== undefined && conditionHolds(report, ifNoneMatch)) return 'if-none-match';
  return undefined;
}

/**
 * A create of an existing id with the same body is a retry and changes nothing; another body (or
 * one that cannot be compared) conflicts. Preconditions come first (412), before the body is
 * compared: RFC 9110 evaluates them before the request's content is processed. A create with
 * If-Match never writes (the condition needs a live report, which a create leaves as it is); one
 * with `If-None-Match: *` creates only an absent report (412 for any existing one).
 */
export function decideCreate(
  report: ReportView,
  command: CreateCommand,
  preconditions: Preconditions = NO_PRECONDITIONS,
): CreateDecision {
  const failed = failedPrecondition(report, preconditions);
  if (failed !== undefined) return PRECONDITION_FAILED[failed];
  if (!report.live) return { kind: 'append', expectedVersion: report.version };
  return report.content !== undefined && sameReport(report.content, command)
    ? { kind: 'unchanged', report: report.content }
    : CONFLICT;
}

/**
 * A delete of a live report appends, decided on its version: a delete with If-Match carries the
 * version it matched as the event's `expectedversion`, so the fold voids it if another write took
 * effect in between. An absent report is 404 whatever the preconditions: RFC 9110 (13.2.1) has a
 * server ignore them when the answer without them would not be a success.
 */
export function decideDelete(report: ReportView, preconditions: Preconditions = NO_PRECONDITIONS): DeleteDecision {
  if (!report.live) return NOT_FOUND;
  const failed = failedPrecondition(report, preconditions);
  if (failed !== undefined) return PRECONDITION_FAILED[failed];
  return { kind: 'append', expectedVersion: report.version };
}

/** A read of a live report answers its version (the ETag); a true If-None-Match is 304, a false If-Match 412; absent is 404 whatever they say. */
export function decideRead(
  report: Pick<ReportView, 'version' | 'live'>,
  preconditions: Preconditions = NO_PRECONDITIONS,
): ReadDecision {
  if (!report.live) return NOT_FOUND;
  const failed = failedPrecondition(report, preconditions);
  if (failed === 'if-match') return PRECONDITION_FAILED[failed];
  if (failed === 'if-none-match') return { kind: 'not-modified', version: report.version };
  return { kind: 'read', version: report.version };
}

/** What a request with a key is, to tell a retry of the first request with that key from another one. */
export interface KeyedAsk {
  readonly op: 'create' | 'delete';
  readonly id: string;
}

export type KeyDecision =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly request: KeyedRequest }
  | { readonly kind: 'mismatch' };

/**
 * A key seen before answers as it did then, for a request of the same kind on the same report;
 * another request is refused (422). A create's content is compared afterwards, with the report the
 * key points at (`answerReplayedCreate`), since a key never remembers content.
 */
export function decideKey(
  keys: ReadonlyMap<string, KeyedRequest>,
  key: string | undefined,
  ask: KeyedAsk,
): KeyDecision {
  const seen = key === undefined ? undefined : keys.get(key);
  if (seen === undefined) return NEW_KEY;
  return seen.op === ask.op && seen.id === ask.id ? { kind: 'replay', request: seen } : { kind: 'mismatch' };
}

/**
 * What a retry of a keyed create gets, given the report as it is now. The key's incarnation is the
 * report's version when the first request made it or found it. Still that incarnation: the first
 * answer again when the request matches the report (a created report that differs: another request
 * with the key, 422; a found one that differs: the conflict again). Gone since (deleted, and
 * perhaps created again): the first answer's content may be erased, so it cannot be given again nor
 * the request compared with it: `deleted-since`, and nothing is written.
 */
export type ReplayedCreate =
  | { readonly kind: 'unchanged'; readonly report: StoredReport }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'deleted-since' };

export function answerReplayedCreate(
  request: KeyedRequest,
  report: ReportView,
  command: CreateCommand,
): ReplayedCreate {
  const { outcome } = request;
  if (outcome.kind !== 'created' && outcome.kind !== 'found') return { kind: 'mismatch' };
  if (!report.live || report.version !== outcome.incarnation) return { kind: 'deleted-since' };
  // A report whose content cannot be opened (its key is missing) is never taken for the request.
  if (report.content === undefined) return CONFLICT;
  if (sameReport(report.content, command)) return { kind: 'unchanged', report: report.content };
  return outcome.kind === 'created' ? { kind: 'mismatch' } : CONFLICT;
}

/** The report as a decision reads it, without its content (an absent report, or a delete). */
export function bareView(state: ReportsView, id: string): ReportView {
  return { version: state.version(id), live: state.has(id) };
}

/** The report a create that took effect made: what the fold stored for it. */
export function storedReport({ name, tag }: CreateCommand): StoredReport {
  return tag === undefined ? { name } : { name, tag };
}
