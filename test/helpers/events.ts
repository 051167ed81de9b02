// Builders of valid report events with fixed envelope fields, so tests state only what matters.
import type { ReportCreated, ReportDeleted } from '../../projections/events.js';

const ENVELOPE = {
  specversion: '1.0',
  source: 'urn:report-store:test',
  time: '2024-05-01T12:00:00.000Z',
  datacontenttype: 'application/json',
} as const;

let sequence = 0;
const eventId = () => `00000000-0000-4000-8000-${String((sequence += 1)).padStart(12, '0')}`;

export function created(id: string, name: string, tag?: string): ReportCreated {
  return {
    ...ENVELOPE,
    id: eventId(),
    type: 'ReportCreated',
    subject: id,
    data: tag === undefined ? { id, name } : { id, name, tag },
  };
}

export function deleted(id: string): ReportDeleted {
  return { ...ENVELOPE, id: eventId(), type: 'ReportDeleted', subject: id, data: { id } };
}

/** `event` as a writer that decided it on version `expectedversion` of its report writes it. */
export function basedOn<Event extends ReportCreated | ReportDeleted>(event: Event, expectedversion: number): Event {
  return { ...event, expectedversion };
}
