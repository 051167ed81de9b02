// Wraps event data in the CloudEvents envelope of the topic contract.
import type {
  AuthContext,
  ReportCreated,
  ReportCreatedData,
  ReportDeleted,
  ReportDeletedData,
} from '../../projections/events.js';
import { MAX_EXPECTED_VERSION } from '../../projections/reports.js';

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

/**
 * The event's `expectedversion`: the report's version the write was decided on. A report that has
 * been through 2^31 - 1 versions (a CloudEvents Integer is 32-bit) is written without one and folds
 * by existence alone: JSON leaves an undefined attribute out.
 */
export function eventBasis(expectedVersion: number): number | undefined {
  return expectedVersion <= MAX_EXPECTED_VERSION ? expectedVersion : undefined;
}

// One literal per type (no spread of a shared envelope): built on every write, and its key order
// is the order of the JSON on the log. `auth` is who wrote it (the CloudEvents authcontext
// extension): its attributes are left out when undefined, as JSON leaves out an undefined value.
export function reportCreated(
  context: EnvelopeContext,
  data: ReportCreatedData,
  expectedVersion: number,
  auth?: AuthContext,
): ReportCreated {
  const { source, newId, time } = context;
  return {
    specversion: '1.0',
    id: newId(),
    source,
    subject: data.id,
    time: time(),
    datacontenttype: 'application/json',
    type: 'ReportCreated',
    expectedversion: eventBasis(expectedVersion),
    authtype: auth?.authtype,
    authid: auth?.authid,
    data,
  };
}

export function reportDeleted(
  context: EnvelopeContext,
  data: ReportDeletedData,
  expectedVersion: number,
  auth?: AuthContext,
): ReportDeleted {
  const { source, newId, time } = context;
  return {
    specversion: '1.0',
    id: newId(),
    source,
    subject: data.id,
    time: time(),
    datacontenttype: 'application/json',
    type: 'ReportDeleted',
    expectedversion: eventBasis(expectedVersion),
    authtype: auth?.authtype,
    authid: auth?.authid,
    data,
  };
}
