// The read model and its fold. Pure: no I/O, no clock. The fold rules are part of the topic
// contract: ReportCreated for an id that exists is void; ReportDeleted for an absent id is void;
// and an event that names the version it was decided on (`expectedversion`) is void unless the
// report is still at that version. The last rule makes a write that reaches the log late harmless:
// a Kafka produce request already sent cannot be recalled, so a write answered 503 may land after
// its client retried and after other writes were acknowledged; decided on a state that is gone, it
// changes nothing. Every instance folds each partition in the same order, so all agree.
import { isSealed, type ReportCreatedData, type ReportDeletedData, type ReportEvent } from './events.js';
import type { SealedContent } from './sealing.js';

/** A report's content in the clear: what a client sent and reads back. */
export interface StoredReport {
  readonly name: string;
  readonly tag?: string;
}

/**
 * A report's content as its event sealed it (sealing.ts), with the `expectedversion` of that event
 * (the associated data a box is opened with). Opening it needs the key from the key store; once the
 * report is deleted, the key is gone and the box opens no more.
 */
export interface SealedReport {
  readonly sealed: SealedContent;
  readonly expectedversion?: number;
}

/** What the fold keeps of one live report: its content in the clear (events written before erasure) or sealed. */
export type ReportContent = StoredReport | SealedReport;

export function isSealedReport(report: ReportContent): report is SealedReport {
  return 'sealed' in report;
}

/** What a fold reads of the reports, by canonical decimal id. */
export interface ReportsView {
  /** Live reports. */
  readonly size: number;
  has(id: string): boolean;
  get(id: string): ReportContent | undefined;
  /**
   * How many events have taken effect on report `id` (0: none): odd while it is live, even once
   * deleted. Kept after the report is deleted, so a late write decided on an older version stays void.
   */
  version(id: string): number;
}

/**
 * The reports as the fold changes them: `set` makes a report live and `delete` ends it, each a new
 * version of its id. `createState` gives a consumer one (a Map that also counts versions); the
 * service keeps a compact table of its own.
 */
export interface ReportsState extends ReportsView {
  set(id: string, report: ReportContent): unknown;
  delete(id: string): unknown;
}

/** The largest `expectedversion` an event carries (a CloudEvents Integer is 32-bit). */
export const MAX_EXPECTED_VERSION = 2 ** 31 - 1;

/** What the fold reads of an event: its type, data and basis (the other envelope attributes change nothing). */
export type FoldEvent =
  | { readonly type: 'ReportCreated'; readonly expectedversion?: number; readonly data: ReportCreatedData }
  | { readonly type: 'ReportDeleted'; readonly expectedversion?: number; readonly data: ReportDeletedData };

/**
 * Why an event changed nothing: a create of a live report (`exists`), a delete of an absent one
 * (`absent`), or an event whose `expectedversion` is no longer the report's (`superseded`: other
 * writes took effect on the report after the state it was decided on). A create of a live report
 * whose content is sealed under the create's own key is a second copy of the create that made it
 * (`copy`): a key is new for each create, and a producer's retry can write a record twice (seen in
 * a rolling restart of Kafka's brokers). Its key is the live report's, so it must not be destroyed,
 * and its writer's request did make the report.
 */
export type VoidReason = 'exists' | 'copy' | 'absent' | 'superseded';

export type Evolution =
  | { readonly kind: 'created'; readonly id: string; readonly report: ReportContent }
  | { readonly kind: 'deleted'; readonly id: string }
  | { readonly kind: 'void'; readonly id: string; readonly reason: VoidReason };

/** A Map of the live reports that also counts each id's versions: the state a consumer folds into. */
export class ReportsMap extends Map<string, ReportContent> implements ReportsState {
  readonly #versions = new Map<string, number>();

  constructor() {
    // No initial entries: Map's constructor would call `set` before the versions exist.
    super();
  }

  version(id: string): number {
    return this.#versions.get(id) ?? 0;
  }

  override set(id: string, report: ReportContent): this {
    super.set(id, report);
    this.#versions.set(id, this.version(id) + 1);
    return this;
  }

  override delete(id: string): boolean {
    if (!super.delete(id)) return false;
    this.#versions.set(id, this.version(id) + 1);
    return true;
  }

  override clear(): void {
    super.clear();
    this.#versions.clear();
  }
}

export function createState(): ReportsMap {
  return new ReportsMap();
}

/** Decides what one event does to the state, without changing it. */
export function evolution(state: ReportsView, event: FoldEvent): Evolution {
  const id = event.data.id;
  const live = state.has(id);
  switch (event.type) {
    case 'ReportCreated': {
      if (live) return { kind: 'void', id, reason: isCopyOfLive(state, event.data) ? 'copy' : 'exists' };
      if (superseded(state, id, event.expectedversion)) return { kind: 'void', id, reason: 'superseded' };
      return { kind: 'created', id, report: contentOf(event.data, event.expectedversion) };
    }
    case 'ReportDeleted':
      if (!live) return { kind: 'void', id, reason: 'absent' };
      if (superseded(state, id, event.expectedversion)) return { kind: 'void', id, reason: 'superseded' };
      return { kind: 'deleted', id };
  }
}

/** Whether the live report `data.id` is sealed under the key `data` is sealed under (see VoidReason). */
function isCopyOfLive(state: ReportsView, data: ReportCreatedData): boolean {
  if (!isSealed(data)) return false;
  const live = state.get(data.id);
  return live !== undefined && isSealedReport(live) && live.sealed.key === data.sealed.key;
}

/** What a create's data makes the report: its content in the clear, or sealed with what opens it. */
function contentOf(data: ReportCreatedData, expectedversion: number | undefined): ReportContent {
  if (isSealed(data))
    return expectedversion === undefined ? { sealed: data.sealed } : { sealed: data.sealed, expectedversion };
  return data.tag === undefined ? { name: data.name } : { name: data.name, tag: data.tag };
}

/** An event without a basis (written before the rule, or by another producer) is judged by existence alone. */
function superseded(state: ReportsView, id: string, expectedVersion: number | undefined): boolean {
  return expectedVersion !== undefined && expectedVersion !== state.version(id);
}

/**
 * Folds one event into the state. The map is updated in place and returned: copying a map per
 * event would make a replay quadratic. `evolution` is the pure decision, this only applies it.
 */
export function evolve(state: ReportsState, event: FoldEvent): Evolution {
  return apply(state, evolution(state, event));
}

/** Applies a decided evolution to the state (what `evolve` does after deciding). */
export function apply(state: ReportsState, change: Evolution): Evolution {
  if (change.kind === 'created') state.set(change.id, change.report);
  else if (change.kind === 'deleted') state.delete(change.id);
  return change;
}

/** Folds a whole history from empty. */
export function fold(events: Iterable<ReportEvent>): ReportsMap;
export function fold<State extends ReportsState>(events: Iterable<ReportEvent>, state: State): State;
export function fold(events: Iterable<ReportEvent>, state: ReportsState = createState()): ReportsState {
  for (const event of events) evolve(state, event);
  return state;
}
