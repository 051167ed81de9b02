// What became of every create written in the clear (a history older than erasure), found by one
// fold of the history: still live at its end, deleted (and by a delete that took the report to
// which version), or void. A history rewrite (rewrite-history.ts) seals each one accordingly: a
// live one under a key put in keys.db, the others under a key destroyed at once.
import { isSealed } from '../../projections/events.js';
import { isSealedReport } from '../../projections/reports.js';
import type { EventLog } from '../log/event-log.js';
import { foldLog } from '../projector/fold-log.js';
import { decodeForFold } from '../read-model/fold-decode.js';
import { createReadModel, type ReadModel } from '../read-model/read-model.js';

/** A create written in the clear that took effect: live at the end, or deleted to `version`. */
export type PlainFate = { readonly kind: 'live' } | { readonly kind: 'deleted'; readonly version: number };

export interface PlainFates {
  /** The fate of the record at `offset` when it is a create written in the clear that took effect (undefined: not one, or void). */
  fateOf(offset: number): PlainFate | undefined;
  /** Marks the live report `id` (written in the clear) deleted to `version`: a deletion a restore applies after the history. */
  markDeleted(id: string, version: number): void;
  /** Creates written in the clear, void ones included: none means there is nothing to seal. */
  readonly plainCreates: number;
}

export interface AnalysedHistory {
  /** The whole fold of the history. */
  readonly model: ReadModel;
  readonly fates: PlainFates;
}

const LIVE: PlainFate = { kind: 'live' };

export async function analyseHistory(
  log: EventLog,
  { signal, onProgress }: { signal?: AbortSignal; onProgress?: (records: number) => void } = {},
): Promise<AnalysedHistory> {
  const model = createReadModel();
  /** Offset of the create of each live report written in the clear. */
  const liveCreates = new Map<string, number>();
  const deletedTo = new Map<number, number>();
  let plainCreates = 0;
  await foldLog(log, model, {
    ...(signal ? { signal } : {}),
    onProgress: ({ records }) => onProgress?.(records),
    onRecord: ({ value, position }, applied) => {
      if (applied.kind === 'created' && !isSealedReport(applied.report)) {
        liveCreates.set(applied.id, position.offset);
        plainCreates += 1;
      } else if (applied.kind === 'deleted') {
        const created = liveCreates.get(applied.id);
        if (created !== undefined) deletedTo.set(created, model.reports.version(applied.id));
        liveCreates.delete(applied.id);
      } else if (applied.kind === 'void' && isPlainCreate(value)) {
        plainCreates += 1;
      }
    },
  });
  const liveAt = new Set(liveCreates.values());
  return {
    model,
    fates: {
      fateOf(offset) {
        const version = deletedTo.get(offset);
        if (version !== undefined) return { kind: 'deleted', version };
        return liveAt.has(offset) ? LIVE : undefined;
      },
      markDeleted(id, version) {
        const created = liveCreates.get(id);
        if (created === undefined) return;
        liveAt.delete(created);
        deletedTo.set(created, version);
      },
      plainCreates,
    },
  };
}

/** Whether a record is a create written in the clear (void ones are looked at again: they are rare). */
export function isPlainCreate(value: Buffer): boolean {
  const input = decodeForFold(value);
  return input.ok && input.event.type === 'ReportCreated' && !isSealed(input.event.data);
}
