// The domain of the Emmett peer of `make bench`, written as Emmett's docs write one: a decider
// (decide + evolve + initialState) over one report's stream. It answers as the service's
// decideCreate/decideDelete do: a create of an existing id with the same name and tag is a retry
// and appends nothing, another body conflicts; a delete of a missing id is not found; a deleted id
// may be created again. Business refusals are thrown as Emmett's own errors (IllegalStateError,
// NotFoundError), the outcome type its command handler and HTTP helpers expect from a decision.
import { IllegalStateError, NotFoundError, type Command, type Decider, type Event } from '@event-driven-io/emmett';

export type ReportFields = {
  /** The decimal form of the int64 id. */
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
};

export type ReportCreated = Event<'ReportCreated', ReportFields>;
export type ReportDeleted = Event<'ReportDeleted', { readonly id: string }>;
export type ReportEvent = ReportCreated | ReportDeleted;

export type CreateReport = Command<'CreateReport', ReportFields>;
export type DeleteReport = Command<'DeleteReport', { readonly id: string }>;
export type ReportCommand = CreateReport | DeleteReport;

export type Report =
  { readonly status: 'absent' } | { readonly status: 'present'; readonly name: string; readonly tag: string | null };

const ABSENT: Report = Object.freeze({ status: 'absent' });

export function initialState(): Report {
  return ABSENT;
}

// A report's state is its last event alone, so the state before it is not needed.
export function evolve(_state: Report, event: ReportEvent): Report {
  switch (event.type) {
    case 'ReportCreated':
      return { status: 'present', name: event.data.name, tag: event.data.tag };
    case 'ReportDeleted':
      return ABSENT;
  }
}

export function decide(command: ReportCommand, state: Report): ReportEvent[] {
  switch (command.type) {
    case 'CreateReport': {
      const { id, name, tag } = command.data;
      if (state.status === 'absent') return [{ type: 'ReportCreated', data: { id, name, tag } }];
      if (state.name === name && state.tag === tag) return [];
      throw new IllegalStateError(`report ${id} already exists with a different name or tag`);
    }
    case 'DeleteReport':
      if (state.status === 'absent') throw new NotFoundError({ id: command.data.id, type: 'report' });
      return [{ type: 'ReportDeleted', data: { id: command.data.id } }];
  }
}

export const reportDecider: Decider<Report, ReportCommand, ReportEvent> = { decide, evolve, initialState };

/** One stream per report, named `<type>-<id>`: Emmett's PostgreSQL store takes the part before the dash as the stream type. */
export function reportStreamId(id: string): string {
  return `report-${id}`;
}
