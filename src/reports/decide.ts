// The command side's decisions, pure: given the projected state and a request, what to do.
import type { ReportsState, StoredReport } from '../../projections/reports.js';

export interface CreateCommand {
  /** Canonical decimal form of the int64 id. */
  readonly id: string;
  readonly name: string;
  readonly tag?: string;
}

export type CreateDecision =
  | { readonly kind: 'append' }
  | { readonly kind: 'unchanged'; readonly report: StoredReport }
  | { readonly kind: 'conflict'; readonly existing: StoredReport };

export type DeleteDecision = { readonly kind: 'append' } | { readonly kind: 'not-found' };

export function sameReport(report: StoredReport, command: CreateCommand): boolean {
  return report.name === command.name && report.tag === command.tag;
}

/** A create of an existing id with the same body is a retry and changes nothing; another body conflicts. */
export function decideCreate(state: ReadonlyMap<string, StoredReport>, command: CreateCommand): CreateDecision {
  const existing = state.get(command.id);
  if (existing === undefined) return { kind: 'append' };
  return sameReport(existing, command) ? { kind: 'unchanged', report: existing } : { kind: 'conflict', existing };
}

export function decideDelete(state: ReportsState | ReadonlyMap<string, StoredReport>, id: string): DeleteDecision {
  return state.has(id) ? { kind: 'append' } : { kind: 'not-found' };
}
