// Idempotency keys, folded from the events like the reports themselves: an event written for a
// request with an `Idempotency-Key` carries the key, so the answer to that request survives
// restarts and is rebuilt by any replay. Pure; the first event that carries a key owns it.
import type { FoldEvent, ReportsView, StoredReport } from './reports.js';

/** What a request was, in a form two requests can be compared by. */
export type RequestFingerprint = string;

/**
 * What the first request with a key did, in the domain's words (the HTTP layer maps them to
 * statuses): a create made the report, found the same one (a retry) or conflicted with another;
 * a delete deleted the report or found none.
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
 * What the request behind `event` did, given the reports *before* the event is folded: a create
 * made the report, or found it with that body already (a retry), or conflicted; a delete deleted
 * the report or found none.
 */
export function outcomeOf(reports: ReportsView, event: FoldEvent): KeyedRequest {
  const id = event.data.id;
  const existing = reports.get(id);
  if (event.type === 'ReportDeleted') return { fingerprint: createFingerprint(id), outcome: existing ? { kind: 'deleted' } : { kind: 'not-found' } };
  const { name, tag } = event.data;
  const report: StoredReport = tag === undefined ? { name } : { name, tag };
  const fingerprint = createFingerprint(id, name, tag);
  if (existing === undefined) return { fingerprint, outcome: { kind: 'created', report } };
  const same = existing.name === name && existing.tag === tag;
  return { fingerprint, outcome: same ? { kind: 'unchanged', report: existing } : { kind: 'conflict' } };
}

/** Records the key of `event` (if any); call before the event is folded into `reports`. */
export function evolveIdempotency(keys: IdempotencyState, reports: ReportsView, event: FoldEvent): void {
  const key = event.data.idempotencyKey;
  if (key === undefined || keys.has(key)) return;
  keys.set(key, outcomeOf(reports, event));
}
