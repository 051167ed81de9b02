// Idempotency keys, folded from the events like the reports themselves: an event written for a
// request with an `Idempotency-Key` carries the key, so the answer to that request survives
// restarts and is rebuilt by any replay. Pure; the first event that carries a key owns it.
import type { Evolution, FoldEvent, ReportsView, StoredReport } from './reports.js';

/** What a request was, in a form two requests can be compared by. */
export type RequestFingerprint = string;

/**
 * What the first request with a key did, in the domain's words (the HTTP layer maps them to
 * statuses): a create made the report, found the same one (a retry), conflicted with another, or
 * was superseded (decided on a state that other writes had changed by the time it reached the log,
 * and the report is absent now); a delete deleted the report or found none (the report it was
 * decided on included, when that one is gone).
 */
export type KeyedOutcome =
  | { readonly kind: 'created'; readonly report: StoredReport }
  | { readonly kind: 'unchanged'; readonly report: StoredReport }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'superseded' }
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
 * fold decided for it (`change`, from `evolution`).
 */
export function outcomeOf(reports: ReportsView, event: FoldEvent, change: Evolution): KeyedRequest {
  const id = event.data.id;
  if (event.type === 'ReportDeleted') return { fingerprint: createFingerprint(id), outcome: change.kind === 'deleted' ? { kind: 'deleted' } : { kind: 'not-found' } };
  const { name, tag } = event.data;
  const fingerprint = createFingerprint(id, name, tag);
  if (change.kind === 'created') return { fingerprint, outcome: { kind: 'created', report: change.report } };
  const existing = reports.get(id);
  if (existing === undefined) return { fingerprint, outcome: { kind: 'superseded' } };
  const same = existing.name === name && existing.tag === tag;
  return { fingerprint, outcome: same ? { kind: 'unchanged', report: existing } : { kind: 'conflict' } };
}

/** Records the key of `event` (if any) with what the fold decided for it; call before `change` is applied. */
export function evolveIdempotency(keys: IdempotencyState, reports: ReportsView, event: FoldEvent, change: Evolution): void {
  const key = event.data.idempotencyKey;
  if (key === undefined || keys.has(key)) return;
  keys.set(key, outcomeOf(reports, event, change));
}
