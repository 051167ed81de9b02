// What a create writes when its content is sealed, and the erasure of a key before an answer: the
// two places where the service's writes meet the key store (src/keys/).
import type { Logger } from 'pino';
import type { AuthContext, ReportEvent } from '../../projections/events.js';
import type { StoredReport } from '../../projections/reports.js';
import { contentBytes, digestOfBytes, sealBytes } from '../../projections/sealing.js';
import { keyIdText, type ContentKey, type KeyStore } from '../keys/key-store.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import type { EventLog } from '../log/event-log.js';
import { UnavailableError } from '../errors.js';
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
 * a crash before the event is appended leaves a key nothing refers to (swept at the next start),
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

/**
 * Erases before a request's answer (`erase` is given the time left): 503 when the store does not
 * confirm it in time (retrying is safe; the eraser keeps trying).
 */
export async function eraseBeforeAnswer(
  logger: Logger,
  id: string,
  timeoutMs: number,
  erase: (timeoutMs: number) => Promise<void>,
): Promise<void> {
  try {
    await erase(timeoutMs);
  } catch (error) {
    logger.warn(
      { err: error, subject: id },
      'the key store did not confirm the destruction of a key; trying again in the background',
    );
    throw new UnavailableError(
      `report ${id} was written, but the destruction of its content key is not confirmed yet; retrying the same request is safe`,
    );
  }
}
