// A create written in the clear, sealed (pure apart from node:crypto): the same event (id, source,
// time, basis, trace context, idempotency key), its name and tag sealed under `key` as the service
// seals them (projections/sealing.ts), with the associated data of this very event. It folds
// exactly as the event in the clear did; its content opens with the key, and never once the key is
// destroyed.
import type { PlainReportCreatedData, ReportCreated } from '../../projections/events.js';
import { sealContent } from '../../projections/sealing.js';
import type { StoredReport } from '../../projections/reports.js';
import { keyIdText, type KeyId } from '../keys/key-store.js';

/** A create whose data is in the clear. */
export type PlainCreate = ReportCreated & { readonly data: PlainReportCreatedData };

/** The content of a create in the clear. */
export function plainContent({ data }: PlainCreate): StoredReport {
  return data.tag === undefined ? { name: data.name } : { name: data.name, tag: data.tag };
}

export function sealCreate(event: PlainCreate, key: { readonly id: KeyId; readonly secret: Buffer }): ReportCreated {
  const { id, idempotencyKey } = event.data;
  const context = event.expectedversion === undefined ? { id } : { id, expectedversion: event.expectedversion };
  const sealed = sealContent(plainContent(event), keyIdText(key.id), key.secret, context);
  return { ...event, data: idempotencyKey === undefined ? { id, sealed } : { id, sealed, idempotencyKey } };
}
