// Builds snapshots for tests from plain maps, as earlier formats spelled them out.
import type { IdempotencyState } from '../../projections/idempotency.js';
import type { StoredReport } from '../../projections/reports.js';
import type { Cursor } from '../../src/log/event-log.js';
import { createReadModel } from '../../src/read-model/read-model.js';
import { ReportTable } from '../../src/read-model/report-table.js';
import type { Anchors, Snapshot } from '../../src/snapshot/snapshot-format.js';

export interface PlainSnapshot {
  readonly log: string;
  readonly cursor: Cursor;
  readonly events: number;
  readonly createdAt: string;
  readonly reports: ReadonlyMap<string, StoredReport>;
  readonly keys: IdempotencyState;
  readonly anchors: Anchors;
}

export function reportTable(reports: Iterable<[string, StoredReport]>): ReportTable {
  const table = new ReportTable();
  for (const [id, report] of reports) table.set(id, report);
  return table;
}

export function testSnapshot({ log, cursor, events, createdAt, reports, keys, anchors }: PlainSnapshot): Snapshot {
  return {
    log,
    createdAt,
    anchors,
    model: createReadModel({ reports: reportTable(reports), keys, cursor, counts: { records: events } }),
  };
}

/** A snapshot as plain values, to compare two (the report table's internal layout may differ). */
export function plainSnapshot(snapshot: Snapshot | undefined): unknown {
  if (snapshot === undefined) return undefined;
  const { model, ...header } = snapshot;
  return { ...header, cursor: model.cursor, counts: model.counts, reports: new Map(model.reports), keys: model.keys };
}
