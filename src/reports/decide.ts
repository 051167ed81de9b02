// The command side's decisions, pure: given what the store holds of a report and a request, what
// to do. Content is handed in opened (the service opens a sealed report's box with its key first,
// and only when the decision needs it: a create of an id that exists).
import type { KeyedRequest } from '../../projections/idempotency.js';
import type { StoredReport } from '../../projections/reports.js';

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

export type CreateDecision = AppendDecision | { readonly kind: 'unchanged'; readonly report: StoredReport } | { readonly kind: 'conflict' };

export type DeleteDecision = AppendDecision | { readonly kind: 'not-found' };

// Decisions that carry nothing are shared constants: decided on every request, allocated once.
const NOT_FOUND: { readonly kind: 'not-found' } = Object.freeze({ kind: 'not-found' });
const CONFLICT: { readonly kind: 'conflict' } = Object.freeze({ kind: 'conflict' });
const NEW_KEY: { readonly kind: 'new' } = Object.freeze({ kind: 'new' });

export function sameReport(report: StoredReport, command: CreateCommand): boolean {
  return report.name === command.name && report.tag === command.tag;
}

/** A create of an existing id with the same body is a retry and changes nothing; another body (or one that cannot be compared) conflicts. */
export function decideCreate(report: ReportView, command: CreateCommand): CreateDecision {
  if (!report.live) return { kind: 'append', expectedVersion: report.version };
  return report.content !== undefined && sameReport(report.content, command) ? { kind: 'unchanged', report: report.content } : CONFLICT;
}

export function decideDelete(report: ReportView): DeleteDecision {
  return report.live ? { kind: 'append', expectedVersion: report.version } : NOT_FOUND;
}

/** What a request with a key is, to tell a retry of the first request with that key from another one. */
export interface KeyedAsk {
  readonly op: 'create' | 'delete';
  readonly id: string;
}

export type KeyDecision = { readonly kind: 'new' } | { readonly kind: 'replay'; readonly request: KeyedRequest } | { readonly kind: 'mismatch' };

/**
 * A key seen before answers as it did then, for a request of the same kind on the same report;
 * another request is refused (422). A create's content is compared afterwards, with the report the
 * key points at (`answerReplayedCreate`), since a key never remembers content.
 */
export function decideKey(keys: ReadonlyMap<string, KeyedRequest>, key: string | undefined, ask: KeyedAsk): KeyDecision {
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
export type ReplayedCreate = { readonly kind: 'unchanged'; readonly report: StoredReport } | { readonly kind: 'conflict' } | { readonly kind: 'mismatch' } | { readonly kind: 'deleted-since' };

export function answerReplayedCreate(request: KeyedRequest, report: ReportView, command: CreateCommand): ReplayedCreate {
  const { outcome } = request;
  if (outcome.kind !== 'created' && outcome.kind !== 'found') return { kind: 'mismatch' };
  if (!report.live || report.version !== outcome.incarnation) return { kind: 'deleted-since' };
  // A report whose content cannot be opened (its key is missing) is never taken for the request.
  if (report.content === undefined) return CONFLICT;
  if (sameReport(report.content, command)) return { kind: 'unchanged', report: report.content };
  return outcome.kind === 'created' ? { kind: 'mismatch' } : CONFLICT;
}
