// Snapshots on disk: named by position, written without leaving temporary files, the newest three
// kept; loading picks the newest one that is intact, of this log and within its head.
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Snapshot } from '../../src/snapshot/snapshot-format.js';
import { loadNewestSnapshot, snapshotDir, writeSnapshot } from '../../src/snapshot/snapshot-store.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const LOG = 'file:events.log';

function snapshotAt(records: number, log = LOG): Snapshot {
  return { log, cursor: new Map([[0, records]]), events: records, createdAt: '2024-05-01T12:00:00.000Z', reports: new Map([[String(records), { name: `at ${records}` }]]), keys: new Map() };
}

const store = suite<{ dir: string }>('snapshot-store');

store.before.each(async (context) => {
  context.dir = snapshotDir(await tempDir('reports-snapshot-store-'));
});
store.after.each(async ({ dir }) => {
  await rm(join(dir, '..'), { recursive: true, force: true });
});

store('writes a file named by its position and leaves no temporary file', async ({ dir }) => {
  const path = await writeSnapshot(dir, snapshotAt(12));
  assert.is(path, join(dir, 'snapshot-0000000000000012.json'));
  assert.equal(await readdir(dir), ['snapshot-0000000000000012.json']);
});

store('names a snapshot of several partitions by the records it covers', async ({ dir }) => {
  const path = await writeSnapshot(dir, { ...snapshotAt(0), cursor: new Map([[0, 3], [1, 4], [2, 0]]) });
  assert.is(path, join(dir, 'snapshot-0000000000000007.json'));
});

store('keeps only the newest three snapshots', async ({ dir }) => {
  for (const records of [1, 2, 3, 4, 5]) await writeSnapshot(dir, snapshotAt(records));
  assert.equal((await readdir(dir)).sort(), [3, 4, 5].map((n) => `snapshot-${String(n).padStart(16, '0')}.json`));
});

store('loads the newest snapshot', async ({ dir }) => {
  await writeSnapshot(dir, snapshotAt(2));
  await writeSnapshot(dir, snapshotAt(9));
  const loaded = await loadNewestSnapshot({ dir, logIdentity: LOG, head: new Map([[0, 10]]), logger: memoryLogger().logger });
  assert.equal(loaded, snapshotAt(9));
});

store('loads nothing, quietly, when there is no snapshot directory', async ({ dir }) => {
  const { logger, lines } = memoryLogger();
  assert.is(await loadNewestSnapshot({ dir, logIdentity: LOG, head: new Map([[0, 10]]), logger }), undefined);
  assert.equal(lines(), []);
});

store('skips, with a warning each, a corrupt file, a snapshot of another log and one beyond the head', async ({ dir }) => {
  await writeSnapshot(dir, snapshotAt(2));
  await writeSnapshot(dir, snapshotAt(5, 'kafka:other/topic'));
  await writeSnapshot(dir, snapshotAt(20));
  await writeFile(join(dir, 'snapshot-0000000000000008.json'), 'garbage');
  const { logger, lines } = memoryLogger();
  const loaded = await loadNewestSnapshot({ dir, logIdentity: LOG, head: new Map([[0, 10]]), logger });
  assert.equal(loaded, snapshotAt(2));
  assert.equal(lines().map((line) => [line['level'], line['msg']]), [
    [40, 'ignored a snapshot that lies beyond the head of the log (was the log replaced?)'],
    [40, 'ignored a corrupt snapshot'],
    [40, 'ignored a snapshot of another log'],
  ]);
});

store('ignores files that are not snapshots', async ({ dir }) => {
  await writeSnapshot(dir, snapshotAt(2));
  await writeFile(join(dir, 'notes.txt'), 'not a snapshot');
  await writeFile(join(dir, 'snapshot-0000000000000009.json.123.tmp'), 'half written');
  const loaded = await loadNewestSnapshot({ dir, logIdentity: LOG, head: new Map([[0, 10]]), logger: memoryLogger().logger });
  assert.equal(loaded, snapshotAt(2));
});

store.run();
