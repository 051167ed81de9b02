// The command side's decisions, pure: given the projected state and a request, what to do.
import type { KeyedOutcome, KeyedRequest, RequestFingerprint } from '../../projections/idempotency.js';
import type { ReportsView, StoredReport } from '../../projections/reports.js';

export interface CreateCommand {
  /** Canonical decimal form of the int64 id. */
  readonly id: string;
  readonly name: string;
  readonly tag?: string;
}

/**
 * Write the event, decided on the report's version `expectedVersion` (the event names it, and the
 * fold voids the event if the report has moved on by the time it reaches the log).
 */
export interface AppendDecision {
  readonly kind: 'append';
  readonly expectedVersion: number;
}

export type CreateDecision = AppendDecision | { readonly kind: 'unchanged'; readonly report: StoredReport } | { readonly kind: 'conflict'; readonly existing: StoredReport };

export type DeleteDecision = AppendDecision | { readonly kind: 'not-found' };

// Decisions that carry nothing are shared constants: decided on every request, allocated once.
const NOT_FOUND: { readonly kind: 'not-found' } = Object.freeze({ kind: 'not-found' });
const NEW_KEY: { readonly kind: 'new' } = Object.freeze({ kind: 'new' });

export function sameReport(report: StoredReport, command: CreateCommand): boolean {
  return report.name === command.name && report.tag === command.tag;
}

/** A create of an existing id with the same body is a retry and changes nothing; another body conflicts. */
export function decideCreate(state: ReportsView, command: CreateCommand): CreateDecision {
  const existing = state.get(command.id);
  if (existing === undefined) return { kind: 'append', expectedVersion: state.version(command.id) };
  return sameReport(existing, command) ? { kind: 'unchanged', report: existing } : { kind: 'conflict', existing };
}

export function decideDelete(state: ReportsView, id: string): DeleteDecision {
  return state.has(id) ? { kind: 'append', expectedVersion: state.version(id) } : NOT_FOUND;
}

export type KeyDecision = { readonly kind: 'new' } | { readonly kind: 'replay'; readonly outcome: KeyedOutcome } | { readonly kind: 'mismatch' };

/** A key seen before answers as it did then, but only for the same request; another request is refused (422). */
export function decideKey(keys: ReadonlyMap<string, KeyedRequest>, key: string | undefined, fingerprint: RequestFingerprint): KeyDecision {
  const seen = key === undefined ? undefined : keys.get(key);
  if (seen === undefined) return NEW_KEY;
  return seen.fingerprint === fingerprint ? { kind: 'replay', outcome: seen.outcome } : { kind: 'mismatch' };
}
