// The record of deletions as `reports backup` and `reports restore` read it: from one or more
// copies of keys.db (the data directory's, a backup's), which keys are destroyed and which
// deletions were recorded by report id and version. A key once destroyed is never live again (slots
// are never reused, and a restore never brings a destroyed slot back), so any copy that says a key
// is destroyed is believed.
import type { KeyId } from './key-store.js';
import { slotOfKeyId } from './key-slots.js';
import type { SlotTable } from './slot-table.js';

export interface RecordedDeletions {
  /** Whether a copy says the key `id` is destroyed (by a delete or a sweep). */
  keyDestroyed(id: KeyId): boolean;
  /** Whether a delete took report `reportId` to `version`. */
  deleted(reportId: string, version: number): boolean;
  /** Deletions recorded (each copy's, counted once). */
  readonly deletions: number;
}

/**
 * `damagedIsDestroyed`: the table (of `tables`) whose damaged slots count as destroyed keys, as the
 * sweep counts them: a restore must not take a destruction torn by a crash for a live key.
 */
export function recordedDeletions(tables: readonly SlotTable[], damagedIsDestroyed?: SlotTable): RecordedDeletions {
  const recorded = new Set<string>();
  for (const table of tables) {
    for (let slot = 0; slot < table.slots; slot += 1) {
      const view = table.view(slot);
      if (view.kind === 'deletion') recorded.add(`${view.reportId}/${view.version}`);
    }
  }
  return {
    keyDestroyed(id) {
      const slot = slotOfKeyId(id);
      if (slot === undefined) return false;
      return tables.some((table) => {
        const kind = slot < table.slots ? table.view(slot).kind : undefined;
        return kind === 'destroyed' || kind === 'deletion' || (kind === 'damaged' && table === damagedIsDestroyed);
      });
    },
    deleted: (reportId, version) => recorded.has(`${reportId}/${version}`),
    deletions: recorded.size,
  };
}
