// Idempotency keys, folded from the events like the reports themselves: an event written for a
// request with an `Idempotency-Key` carries the key, so the answer to that request survives
// restarts and is rebuilt by any replay. Pure; the first event that carries a key owns it.
import type { ReportEvent } from './events.js';
import type { StoredReport } from './reports.js';

/** What a request was, in a form two requests can be compared by. */
export type RequestFingerprint = string;

/** The answer the first request with a key got. */
export type KeyedAnswer =
  | { readonly status: 200; readonly report: StoredReport }
  | { readonly status: 204 }
  | { readonly status: 404 }
  | { readonly status: 409 };

export interface KeyedRequest {
  readonly fingerprint: RequestFingerprint;
  readonly answer: KeyedAnswer;
}

export type IdempotencyState = Map<string, KeyedRequest>;

export function createFingerprint(id: string, name: string, tag: string | undefined): RequestFingerprint;
export function createFingerprint(id: string): RequestFingerprint;
export function createFingerprint(id: string, name?: string, tag?: string): RequestFingerprint {
  return name === undefined ? JSON.stringify(['DELETE', id]) : JSON.stringify(['POST', id, name, tag ?? null]);
}

/**
 * What the request behind `event` was answered, given the reports *before* the event is folded:
 * a create is 200 when it made the report or the report already had that body (a retry), else 409;
 * a delete is 204 when the report existed, else 404.
 */
export function answerOf(reports: ReadonlyMap<string, StoredReport>, event: ReportEvent): KeyedRequest {
  const id = event.data.id;
  const existing = reports.get(id);
  if (event.type === 'ReportDeleted') return { fingerprint: createFingerprint(id), answer: existing ? { status: 204 } : { status: 404 } };
  const { name, tag } = event.data;
  const report: StoredReport = tag === undefined ? { name } : { name, tag };
  const fingerprint = createFingerprint(id, name, tag);
  if (existing === undefined) return { fingerprint, answer: { status: 200, report } };
  const same = existing.name === name && existing.tag === tag;
  return { fingerprint, answer: same ? { status: 200, report: existing } : { status: 409 } };
}

/** Records the key of `event` (if any); call before the event is folded into `reports`. */
export function evolveIdempotency(keys: IdempotencyState, reports: ReadonlyMap<string, StoredReport>, event: ReportEvent): void {
  const key = event.data.idempotencyKey;
  if (key === undefined || keys.has(key)) return;
  keys.set(key, answerOf(reports, event));
}
