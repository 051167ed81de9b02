// The keys.db a restore puts in place: the data directory's (current) and the backup's, merged
// slot by slot over the longer of the two, so that ids keep going up from the highest either ever
// gave out (a key minted after the restore never takes an id the current store used). A deletion
// either records stays recorded; a key the current store destroyed (or whose slot it holds
// damaged, as a destruction torn by a crash leaves it) stays destroyed (a restore
// never brings a destroyed key back); a key live in either is kept, the current one's first: the
// backup's for its reports, the current store's so that the log being replaced still opens with
// this file until the restore has put the new log in place (the next start sweeps the keys no
// report of the restored history uses). Every other slot (reserved, damaged, or what the backup
// left out) is written destroyed.
import { SlotState, type SlotContent, type SlotView } from './key-slots.js';
import type { SlotTable } from './slot-table.js';

export interface MergedKeys {
  readonly slots: number;
  contentOf(slot: number): SlotContent;
}

/** `damagedIsDestroyed`: a damaged slot of the current store is written destroyed, not the backup's key. */
export function mergeKeyTables(
  current: SlotTable | undefined,
  backup: SlotTable | undefined,
  damagedIsDestroyed = true,
): MergedKeys {
  const viewIn = (table: SlotTable | undefined, slot: number): SlotView | undefined =>
    table !== undefined && slot < table.slots ? table.view(slot) : undefined;
  return {
    slots: Math.max(current?.slots ?? 0, backup?.slots ?? 0),
    contentOf(slot) {
      const mine = viewIn(current, slot);
      const theirs = viewIn(backup, slot);
      for (const view of [mine, theirs])
        if (view?.kind === 'deletion') return { deletion: { reportId: view.reportId, version: view.version } };
      // A damaged slot of the current store may be a destruction a crash tore: never the backup's key.
      if (mine?.kind === 'destroyed' || (mine?.kind === 'damaged' && damagedIsDestroyed)) return SlotState.destroyed;
      for (const view of [mine, theirs])
        if (view?.kind === 'live') return { secret: view.secret, contentDigest: view.contentDigest };
      return SlotState.destroyed;
    },
  };
}

/**
 * The first slot live in both tables under different secrets: the two are not one store's (a key
 * is written once, at its slot, and only destroyed after), so the data directory's keys.db belongs
 * to another store, and merging would give the backup's reports its keys and its deletions.
 */
export function firstForeignSlot(current: SlotTable | undefined, backup: SlotTable | undefined): number | undefined {
  if (current === undefined || backup === undefined) return undefined;
  const shared = Math.min(current.slots, backup.slots);
  for (let slot = 0; slot < shared; slot += 1) {
    const mine = current.view(slot);
    const theirs = backup.view(slot);
    if (mine.kind === 'live' && theirs.kind === 'live' && !mine.secret.equals(theirs.secret)) return slot;
  }
  return undefined;
}
