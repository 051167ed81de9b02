// Records decoded for the fold, in a form that crosses a thread boundary cheaply: a row of
// strings per record (structured clone copies it at a small fraction of the cost of parsing the
// CloudEvent again), turned back into the FoldEvent that projections/ folds.
import type { Decoded } from '../../projections/codec.js';
import type { FoldEvent } from '../../projections/reports.js';

export type FoldRow =
  | readonly [kind: 0, reason: string]
  | readonly [kind: 1, id: string, name: string, tag: string | undefined, idempotencyKey: string | undefined]
  | readonly [kind: 2, id: string, idempotencyKey: string | undefined];

/** What the fold needs of a decoded record, or why it is not an event. */
export type FoldInput = { readonly ok: true; readonly event: FoldEvent } | { readonly ok: false; readonly reason: string };

export function foldRow(decoded: Decoded): FoldRow {
  if (!decoded.ok) return [0, decoded.reason];
  const { event } = decoded;
  if (event.type === 'ReportDeleted') return [2, event.data.id, event.data.idempotencyKey];
  return [1, event.data.id, event.data.name, event.data.tag, event.data.idempotencyKey];
}

export function foldInput(row: FoldRow): FoldInput {
  switch (row[0]) {
    case 0:
      return { ok: false, reason: row[1] };
    case 1: {
      const [, id, name, tag, idempotencyKey] = row;
      const data = tag === undefined ? { id, name } : { id, name, tag };
      return { ok: true, event: { type: 'ReportCreated', data: idempotencyKey === undefined ? data : { ...data, idempotencyKey } } };
    }
    case 2: {
      const [, id, idempotencyKey] = row;
      return { ok: true, event: { type: 'ReportDeleted', data: idempotencyKey === undefined ? { id } : { id, idempotencyKey } } };
    }
  }
}
