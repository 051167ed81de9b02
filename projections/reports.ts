// The read model and its fold. Pure: no I/O, no clock. The fold rules are part of the topic
// contract: ReportCreated for an id that exists is void; ReportDeleted for an absent id is void.
import type { ReportCreatedData, ReportDeletedData, ReportEvent } from './events.js';

/** What the store knows of one live report. */
export interface StoredReport {
  readonly name: string;
  readonly tag?: string;
}

/** What a fold reads of the live reports, by canonical decimal id. */
export interface ReportsView {
  readonly size: number;
  has(id: string): boolean;
  get(id: string): StoredReport | undefined;
}

/**
 * The live reports by canonical decimal id, as the fold changes them. A `Map<string, StoredReport>`
 * is one (what `createState` gives a consumer); the service keeps a compact table of its own.
 */
export interface ReportsState extends ReportsView {
  set(id: string, report: StoredReport): unknown;
  delete(id: string): unknown;
}

/** What the fold reads of an event: its type and data (the other envelope attributes change nothing). */
export type FoldEvent = { readonly type: 'ReportCreated'; readonly data: ReportCreatedData } | { readonly type: 'ReportDeleted'; readonly data: ReportDeletedData };

export type Evolution =
  | { readonly kind: 'created'; readonly id: string; readonly report: StoredReport }
  | { readonly kind: 'deleted'; readonly id: string }
  | { readonly kind: 'void'; readonly id: string };

export function createState(): Map<string, StoredReport> {
  return new Map();
}

/** Decides what one event does to the state, without changing it. */
export function evolution(state: ReportsView, event: FoldEvent): Evolution {
  const id = event.data.id;
  switch (event.type) {
    case 'ReportCreated': {
      if (state.has(id)) return { kind: 'void', id };
      const { name, tag } = event.data;
      return { kind: 'created', id, report: tag === undefined ? { name } : { name, tag } };
    }
    case 'ReportDeleted':
      return state.has(id) ? { kind: 'deleted', id } : { kind: 'void', id };
  }
}

/**
 * Folds one event into the state. The map is updated in place and returned: copying a map per
 * event would make a replay quadratic. `evolution` is the pure decision, this only applies it.
 */
export function evolve(state: ReportsState, event: FoldEvent): Evolution {
  const change = evolution(state, event);
  if (change.kind === 'created') state.set(change.id, change.report);
  else if (change.kind === 'deleted') state.delete(change.id);
  return change;
}

/** Folds a whole history from empty. */
export function fold(events: Iterable<ReportEvent>): Map<string, StoredReport>;
export function fold<State extends ReportsState>(events: Iterable<ReportEvent>, state: State): State;
export function fold(events: Iterable<ReportEvent>, state: ReportsState = createState()): ReportsState {
  for (const event of events) evolve(state, event);
  return state;
}
