// Wraps event data in the CloudEvents envelope of the topic contract.
import type { ReportCreated, ReportCreatedData, ReportDeleted, ReportDeletedData } from '../../projections/events.js';

export interface EnvelopeContext {
  readonly source: string;
  readonly newId: () => string;
  /** The RFC 3339 time of now, for the event's `time`. */
  readonly time: () => string;
}

/**
 * The wall clock as RFC 3339 text (`Date#toISOString`), formatted once per millisecond: every
 * write stamps its event, and formatting a Date cost more than the rest of the envelope.
 */
export function isoClock(nowMs: () => number = Date.now): () => string {
  let lastMs = Number.NaN;
  let lastText = '';
  return () => {
    const ms = nowMs();
    if (ms !== lastMs) {
      lastText = new Date(ms).toISOString();
      lastMs = ms;
    }
    return lastText;
  };
}

// One literal per type (no spread of a shared envelope): built on every write, and its key order
// is the order of the JSON on the log.
export function reportCreated(context: EnvelopeContext, data: ReportCreatedData): ReportCreated {
  const { source, newId, time } = context;
  return { specversion: '1.0', id: newId(), source, subject: data.id, time: time(), datacontenttype: 'application/json', type: 'ReportCreated', data };
}

export function reportDeleted(context: EnvelopeContext, data: ReportDeletedData): ReportDeleted {
  const { source, newId, time } = context;
  return { specversion: '1.0', id: newId(), source, subject: data.id, time: time(), datacontenttype: 'application/json', type: 'ReportDeleted', data };
}
