// Idempotency keys, folded from the events like the reports themselves: an event written for a
// request with an `Idempotency-Key` carries the key, so the answer to that request survives
// restarts and is rebuilt by any replay. Pure; the first event that carries a key owns it, unless
// the fold voided that event as superseded (decided on a version of the report that others had
// moved on from): the service decides such a write again and writes it again with the same key, and
// the key belongs to the event that answers the request.
import type { Evolution, FoldEvent, ReportsView, StoredReport } from './reports.js';

/** What a request was, in a form two requests can be compared by. */
export type RequestFingerprint = string;

/**
 * What the first request with a key did, in the domain's words (the HTTP layer maps them to
 * statuses): a create made the report, found the same one (a retry) or conflicted with another; a
 * delete deleted the report or found none.
 */
export type KeyedOutcome =
  | { readonly kind: 'created'; readonly report: StoredReport }
  | { readonly kind: 'unchanged'; readonly report: StoredReport }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'not-found' };

export interface KeyedRequest {
  readonly fingerprint: RequestFingerprint;
  readonly outcome: KeyedOutcome;
}

export type IdempotencyState = Map<string, KeyedRequest>;

export function createFingerprint(id: string, name: string, tag: string | undefined): RequestFingerprint;
export function createFingerprint(id: string): RequestFingerprint;
export function createFingerprint(id: string, name?: string, tag?: string): RequestFingerprint {
  return name === undefined ? JSON.stringify(['DELETE', id]) : JSON.stringify(['POST', id, name, tag ?? null]);
}

/**
 * What the request behind `event` did, given the reports *before* the event is folded and what the
 * fold decided for it (`change`, from `evolution`); undefined for an event void as superseded,
 * which answers no request (its writer decides again).
 */
export function outcomeOf(reports: ReportsView, event: FoldEvent, change: Evolution): KeyedRequest | undefined {
  if (change.kind === 'void' && change.reason === 'superseded') return undefined;
  const id = event.data.id;
  if (event.type === 'ReportDeleted') return { fingerprint: createFingerprint(id), outcome: change.kind === 'deleted' ? { kind: 'deleted' } : { kind: 'not-found' } };
  const { name, tag } = event.data;
  const fingerprint = createFingerprint(id, name, tag);
  if (change.kind === 'created') return { fingerprint, outcome: { kind: 'created', report: change.report } };
  // Void because the report exists: a retry of it, or a conflict with it.
  const existing = reports.get(id);
  const same = existing !== undefined && existing.name === name && existing.tag === tag;
  return { fingerprint, outcome: same ? { kind: 'unchanged', report: existing } : { kind: 'conflict' } };
}

/** Records the key of `event` (if any) with what the fold decided for it; call before `change` is applied. */
export function evolveIdempotency(keys: IdempotencyState, reports: ReportsView, event: FoldEvent, change: Evolution): void {
  const key = event.data.idempotencyKey;
  if (key === undefined || keys.has(key)) return;
  const request = outcomeOf(reports, event, change);
  if (request !== undefined) keys.set(key, request);
}
