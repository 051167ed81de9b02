// Idempotency keys, folded from the events like the reports themselves: an event written for a
// request with an `Idempotency-Key` carries the key, so the answer to that request survives
// restarts and is rebuilt by any replay. Pure; the first event that carries a key owns it, unless
// the fold voided that event as superseded (decided on a version of the report that others had
// moved on from): the service decides such a write again and writes it again with the same key, and
// the key belongs to the event that answers the request.
//
// A key remembers what its request was and did, never the request's name or tag: those may be
// erased (a DELETE forgets the report's content), and a key must not keep them alive. So a key
// costs the same whatever the report holds, and a retry of a create is compared with the report
// the key points at (its incarnation: the report's version once created), which is where the
// content still is, if anywhere.
import type { Evolution, FoldEvent, ReportsView } from './reports.js';

/**
 * What the first request with a key did: a create made the report (`created`) or found it in place
 * (`found`: void because it existed, the same report or another: which, only the content can tell);
 * a delete deleted the report or found none. `incarnation` is the version of the report that a
 * create made or found (odd: live).
 */
export type KeyedOutcome =
  | { readonly kind: 'created'; readonly incarnation: number }
  | { readonly kind: 'found'; readonly incarnation: number }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'not-found' };

export interface KeyedRequest {
  readonly op: 'create' | 'delete';
  /** The report the request named. */
  readonly id: string;
  readonly outcome: KeyedOutcome;
}

export type IdempotencyState = Map<string, KeyedRequest>;

/**
 * What the request behind `event` did, given the reports *before* the event is folded and what the
 * fold decided for it (`change`, from `evolution`); undefined for an event void as superseded,
 * which answers no request (its writer decides again).
 */
export function outcomeOf(reports: ReportsView, event: FoldEvent, change: Evolution): KeyedRequest | undefined {
  if (change.kind === 'void' && change.reason === 'superseded') return undefined;
  const id = event.data.id;
  if (event.type === 'ReportDeleted')
    return { op: 'delete', id, outcome: change.kind === 'deleted' ? { kind: 'deleted' } : { kind: 'not-found' } };
  // A create took effect (the report's next version), or was void because the report exists.
  const version = reports.version(id);
  return {
    op: 'create',
    id,
    outcome:
      change.kind === 'created'
        ? { kind: 'created', incarnation: version + 1 }
        : { kind: 'found', incarnation: version },
  };
}

/** Records the key of `event` (if any) with what the fold decided for it; call before `change` is applied. */
export function evolveIdempotency(
  keys: IdempotencyState,
  reports: ReportsView,
  event: FoldEvent,
  change: Evolution,
): void {
  const key = event.data.idempotencyKey;
  if (key === undefined || keys.has(key)) return;
  const request = outcomeOf(reports, event, change);
  if (request !== undefined) keys.set(key, request);
}
