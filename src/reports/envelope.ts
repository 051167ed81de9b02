// Wraps event data in the CloudEvents envelope of the topic contract.
import type { ReportCreated, ReportCreatedData, ReportDeleted, ReportDeletedData } from '../../projections/events.js';

export interface EnvelopeContext {
  readonly source: string;
  readonly newId: () => string;
  readonly now: () => Date;
}

function envelope(context: EnvelopeContext, subject: string) {
  return {
    specversion: '1.0' as const,
    id: context.newId(),
    source: context.source,
    subject,
    time: context.now().toISOString(),
    datacontenttype: 'application/json' as const,
  };
}

export function reportCreated(context: EnvelopeContext, data: ReportCreatedData): ReportCreated {
  return { ...envelope(context, data.id), type: 'ReportCreated', data };
}

export function reportDeleted(context: EnvelopeContext, data: ReportDeletedData): ReportDeleted {
  return { ...envelope(context, data.id), type: 'ReportDeleted', data };
}
