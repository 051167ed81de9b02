// What a deleted report costs the server once it is gone: two histories of small ids with the same
// live reports, one that also created and deleted as many others (N creates, then every second one
// deleted) and one that never had them (the N/2 survivors created alone). The difference of the
// two servers' heap and external memory after GC, per deleted id, is what remembering a deleted
// id costs (its slot in the id table, and whatever of its record was not yet compacted away).
import { join } from 'node:path';
import { writeHistory } from './history.js';
import type { StartUpProbe } from './start-up-probe.js';

export interface DeletedIdsOptions {
  readonly root: string;
  /** Reports created in the history with deletes. */
  readonly events: number;
  readonly probe: StartUpProbe;
  readonly progress: (line: string) => void;
}

/** Lines for the report: bytes per remembered deleted id, measured. */
export async function measureDeletedIds({ root, events, probe, progress }: DeletedIdsOptions): Promise<string[]> {
  const withDeletes = join(root, 'with-deletes');
  const survivorsOnly = join(root, 'survivors-only');
  const deleted = Math.ceil(events / 2);
  await writeHistory(withDeletes, { firstId: 1000n, reports: events, deleteEven: true });
  await writeHistory(survivorsOnly, { firstId: 1000n, reports: events, createEven: false });
  progress('server start on each (one run each: heap after GC hardly varies)');
  const heapWith = (await probe.startAndProbe(withDeletes)).heapUsed;
  const heapWithout = (await probe.startAndProbe(survivorsOnly)).heapUsed;
  const perDeleted = (heapWith - heapWithout) / deleted;
  return [
    `deleted ids: ${events.toLocaleString('en-US')} creates then ${deleted.toLocaleString('en-US')} deletes, against the ${(events - deleted).toLocaleString('en-US')} survivors created alone:`,
    `  ${((heapWith - heapWithout) / 1e6).toFixed(1)} MB more heap and external memory after GC, ${perDeleted.toFixed(1)} bytes per deleted id.`,
  ];
}
