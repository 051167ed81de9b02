// Wraps event data in the CloudEvents envelope of the topic contract.
import type { ReportCreated, ReportCreatedData, ReportDeleted, ReportDeletedData } from '../../projections/events.js';

export interface EnvelopeContext {
  readonly source: string;
  readonly newId: () => string;
  readonly now: () => Date;
}

// One literal per type (no spread of a shared envelope): built on every write, and its key order
// is the order of the JSON on the log.
export function reportCreated(context: EnvelopeContext, data: ReportCreatedData): ReportCreated {
  const { source, newId, now } = context;
  return { specversion: '1.0', id: newId(), source, subject: data.id, time: now().toISOString(), datacontenttype: 'application/json', type: 'ReportCreated', data };
}

export function reportDeleted(context: EnvelopeContext, data: ReportDeletedData): ReportDeleted {
  const { source, newId, now } = context;
  return { specversion: '1.0', id: newId(), source, subject: data.id, time: now().toISOString(), datacontenttype: 'application/json', type: 'ReportDeleted', data };
}
