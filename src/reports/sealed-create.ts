// What a create writes when its content is sealed: its name and tag under a new key, durable
// before the create is appended (src/keys/; erasures are request-erasures.ts).
import type { AuthContext, ReportEvent } from '../../projections/events.js';
import type { StoredReport } from '../../projections/reports.js';
import { contentBytes, digestOfBytes, sealBytes } from '../../projections/sealing.js';
import { keyIdText, type ContentKey, type KeyStore } from '../keys/key-store.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import type { EventLog } from '../log/event-log.js';
import { eventBasis, reportCreated, type EnvelopeContext } from './envelope.js';

export interface SealingContext extends EnvelopeContext {
  readonly log: EventLog;
  readonly keys: KeyStore;
}

/** What a create asks to be written: its report, under its id and Idempotency-Key, on a version, by someone. */
export interface CreateToSeal {
  readonly id: string;
  readonly report: StoredReport;
  readonly idempotencyKey: string | undefined;
  readonly expectedVersion: number;
  readonly auth: AuthContext | undefined;
}

/**
 * The create event, its name and tag sealed under a new key that is durable before this returns:
 * a crash before the event is appended leaves a key nothing refers to (swept by a later start),
 * never an event whose content has no key. A failure of the key store is rejected as it came.
 */
export async function sealedCreate(
  context: SealingContext,
  create: CreateToSeal,
  timeoutMs: number,
): Promise<{ event: ReportEvent; key: ContentKey }> {
  const { keys } = context;
  const { id, report, idempotencyKey, expectedVersion, auth } = create;
  // The content's bytes once, for its digest and its box.
  const content = contentBytes(report);
  const key = keys.mint(digestOfBytes(content), { partitionKey: id });
  const basis = eventBasis(expectedVersion);
  const sealed = {
    key: keyIdText(key.id),
    box: sealBytes(content, key.secret, basis === undefined ? { id } : { id, expectedversion: basis }).toString(
      'base64',
    ),
  };
  const data = idempotencyKey === undefined ? { id, sealed } : { id, sealed, idempotencyKey };
  // A log that carries keys makes it durable with the event, in one group commit; otherwise it goes first.
  if (!hasKeyCarrier(context.log)) await keys.put([key], { timeoutMs });
  return { event: reportCreated(context, data, expectedVersion, auth), key };
}
