// Snapshots on disk: named by position, written without leaving temporary files, the newest three
// kept; loading picks the newest one that is intact, of this log and within its head.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Cursor, LogRecord } from '../../src/log/event-log.js';
import { recordDigest } from '../../src/snapshot/snapshot-anchor.js';
import { decodeSnapshot, encodeSnapshot, type Snapshot } from '../../src/snapshot/snapshot-format.js';
import { plainSnapshot, testSnapshot, type PlainSnapshot } from '../helpers/snapshots.js';
import { loadNewestSnapshot, snapshotDir, writeSnapshot } from '../../src/snapshot/snapshot-store.js';
import { withTimeout } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const LOG = 'file:events.log';

/** The record at `offset` of a one-partition history named `history`. */
function recordAt(offset: number, history = 'a'): LogRecord {
  return {
    key: String(offset),
    value: Buffer.from(`${history}-${offset}`),
    timestampMs: 0,
    position: { partition: 0, offset },
  };
}

/** A ten-record log of one partition, as the store sees it through the port. */
function tenRecords(history = 'a') {
  return {
    identity: LOG,
    head: (): Promise<Cursor> => Promise.resolve(new Map([[0, 10]])),
    // eslint-disable-next-line @typescript-eslint/require-await -- the port's readBatches is an async iterable; this stand-in has nothing to wait for
    async *readBatches(from: Cursor): AsyncIterable<readonly LogRecord[]> {
      for (let offset = from.get(0) ?? 0; offset < 10; offset += 1) yield [recordAt(offset, history)];
    },
  };
}

function plainAt(records: number, log = LOG): PlainSnapshot {
  const anchors = new Map(records > 0 ? [[0, recordDigest(recordAt(records - 1))]] : []);
  return {
    log,
    cursor: new Map([[0, records]]),
    events: records,
    createdAt: '2024-05-01T12:00:00.000Z',
    reports: new Map([[String(records), { name: `at ${records}` }]]),
    keys: new Map(),
    anchors,
  };
}

function snapshotAt(records: number, log = LOG): Snapshot {
  return testSnapshot(plainAt(records, log));
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
  assert.is(path, join(dir, 'snapshot-0000000000000012.snap'));
  assert.equal(await readdir(dir), ['snapshot-0000000000000012.snap']);
});

store('names a snapshot of several partitions by the records it covers', async ({ dir }) => {
  const path = await writeSnapshot(
    dir,
    testSnapshot({
      ...plainAt(0),
      cursor: new Map([
        [0, 3],
        [1, 4],
        [2, 0],
      ]),
    }),
  );
  assert.is(path, join(dir, 'snapshot-0000000000000007.snap'));
});

store(
  'writes a model of many MB in pieces: the file is the one-buffer encoding, checksum included',
  async ({ dir }) => {
    const reports = new Map(
      Array.from(
        { length: 60_000 },
        (_, i) => [String(1e12 + i), { name: `report ${i} `.padEnd(100, 'x'), tag: 'tagged' }] as const,
      ),
    );
    const snapshot = testSnapshot({ ...plainAt(60_000), reports });
    const path = await writeSnapshot(dir, snapshot);
    const file = await readFile(path);
    assert.ok(file.length > 6 * 1024 * 1024, `a snapshot of ${file.length} bytes spans several write pieces and syncs`);
    assert.ok(file.equals(encodeSnapshot(snapshot)));
    const decoded = decodeSnapshot(file);
    assert.ok(decoded.ok);
    assert.is(decoded.snapshot.model.reports.size, 60_000);
  },
);

store('keeps only the newest three snapshots', async ({ dir }) => {
  for (const records of [1, 2, 3, 4, 5]) await writeSnapshot(dir, snapshotAt(records));
  assert.equal(
    (await readdir(dir)).sort(),
    [3, 4, 5].map((n) => `snapshot-${String(n).padStart(16, '0')}.snap`),
  );
});

store(
  'removes an old snapshot of several MiB (given back a piece at a time) and one a reader removed first',
  async ({ dir }) => {
    // Old snapshots as the store names them: one of 3.5 MiB and a name whose file is already gone.
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'snapshot-0000000000000001.snap'), Buffer.alloc(3.5 * 1024 * 1024, 1));
    await symlink(join(dir, 'gone'), join(dir, 'snapshot-0000000000000002.snap'));
    for (const records of [3, 4, 5]) await writeSnapshot(dir, snapshotAt(records), { pauseMs: 1 });
    assert.equal(
      (await readdir(dir)).sort(),
      [3, 4, 5].map((n) => `snapshot-${String(n).padStart(16, '0')}.snap`),
    );
  },
);

store('loads the newest snapshot', async ({ dir }) => {
  await writeSnapshot(dir, snapshotAt(2));
  await writeSnapshot(dir, snapshotAt(9));
  const loaded = await loadNewestSnapshot({
    dir,
    log: tenRecords(),
    head: new Map([[0, 10]]),
    logger: memoryLogger().logger,
  });
  assert.equal(plainSnapshot(loaded), plainSnapshot(snapshotAt(9)));
});

store(
  'skips a listed snapshot that is gone when it is read (the server pruned it beside a reader)',
  async ({ dir }) => {
    await writeSnapshot(dir, snapshotAt(2));
    // A name that readdir lists and readFile finds gone: a symbolic link to nothing.
    await symlink(join(dir, 'pruned'), join(dir, 'snapshot-0000000000000009.snap'));
    const loaded = await loadNewestSnapshot({
      dir,
      log: tenRecords(),
      head: new Map([[0, 10]]),
      logger: memoryLogger().logger,
    });
    assert.equal(plainSnapshot(loaded), plainSnapshot(snapshotAt(2)));
  },
);

store('loads nothing, quietly, when there is no snapshot directory', async ({ dir }) => {
  const { logger, lines } = memoryLogger();
  assert.is(await loadNewestSnapshot({ dir, log: tenRecords(), head: new Map([[0, 10]]), logger }), undefined);
  assert.equal(lines(), []);
});

store(
  'skips, with a warning each, a corrupt file, a snapshot of another log and one beyond the head',
  async ({ dir }) => {
    await writeSnapshot(dir, snapshotAt(2));
    await writeSnapshot(dir, snapshotAt(5, 'kafka:other/topic'));
    await writeSnapshot(dir, snapshotAt(20));
    await writeFile(join(dir, 'snapshot-0000000000000008.snap'), 'garbage');
    const { logger, lines } = memoryLogger();
    const loaded = await loadNewestSnapshot({ dir, log: tenRecords(), head: new Map([[0, 10]]), logger });
    assert.equal(plainSnapshot(loaded), plainSnapshot(snapshotAt(2)));
    assert.equal(
      lines().map((line) => [line['level'], line['msg']]),
      [
        [40, 'ignored a snapshot that lies beyond the head of the log (was the log replaced?)'],
        [40, 'ignored a corrupt snapshot'],
        [40, 'ignored a snapshot of another log'],
      ],
    );
  },
);

store(
  'skips, with a warning naming it, a directory and a FIFO named like snapshots, at once, for an older one',
  async ({ dir }) => {
    await writeSnapshot(dir, snapshotAt(2));
    await mkdir(join(dir, 'snapshot-0000000000000008.snap'));
    execFileSync('mkfifo', [join(dir, 'snapshot-0000000000000009.snap')]);
    const { logger, lines } = memoryLogger();
    const loaded = await withTimeout(
      loadNewestSnapshot({ dir, log: tenRecords(), head: new Map([[0, 10]]), logger }),
      5000,
      'the snapshots to be read',
    );
    assert.equal(plainSnapshot(loaded), plainSnapshot(snapshotAt(2)));
    assert.equal(
      lines().map((line) => [line['level'], line['msg'], line['path']]),
      [
        [40, 'ignored a snapshot that cannot be read', join(dir, 'snapshot-0000000000000009.snap')],
        [40, 'ignored a snapshot that cannot be read', join(dir, 'snapshot-0000000000000008.snap')],
      ],
    );
    assert.match(String(lines()[0]?.['reason']), 'is a FIFO (named pipe), not a regular file');
    assert.match(String(lines()[1]?.['reason']), 'is a directory, not a regular file');
  },
);

store(
  'ignores, with a warning, a snapshots directory that cannot be read (here a file in its place)',
  async ({ dir }) => {
    const notADir = join(dir, '..', 'not-a-directory');
    await writeFile(notADir, 'a file');
    const { logger, lines } = memoryLogger();
    assert.is(
      await loadNewestSnapshot({ dir: notADir, log: tenRecords(), head: new Map([[0, 10]]), logger }),
      undefined,
    );
    assert.equal(
      lines().map((line) => [line['level'], line['msg'], line['dir']]),
      [[40, 'ignored the snapshots directory: it cannot be read', notADir]],
    );
    assert.match(String(lines()[0]?.['reason']), 'ENOTDIR');
  },
);

store('ignores files that are not snapshots', async ({ dir }) => {
  await writeSnapshot(dir, snapshotAt(2));
  await writeFile(join(dir, 'notes.txt'), 'not a snapshot');
  await writeFile(join(dir, 'snapshot-0000000000000009.json.123.tmp'), 'half written');
  const loaded = await loadNewestSnapshot({
    dir,
    log: tenRecords(),
    head: new Map([[0, 10]]),
    logger: memoryLogger().logger,
  });
  assert.equal(plainSnapshot(loaded), plainSnapshot(snapshotAt(2)));
});

store(
  'skips, with a warning, a snapshot whose last folded record is not in the log, for an older one that matches',
  async ({ dir }) => {
    await writeSnapshot(dir, snapshotAt(0));
    await writeSnapshot(dir, snapshotAt(9));
    const { logger, lines } = memoryLogger();
    const loaded = await loadNewestSnapshot({ dir, log: tenRecords('restored'), head: new Map([[0, 10]]), logger });
    assert.equal(plainSnapshot(loaded), plainSnapshot(snapshotAt(0)));
    assert.equal(
      lines().map((line) => [line['msg'], line['reason']]),
      [
        [
          'ignored a snapshot of another history of this log (restored from a copy, or a topic created again)',
          'the record at 0:8 is not the one it folded',
        ],
      ],
    );
  },
);

store('skips a snapshot that records no anchor for a partition it folded', async ({ dir }) => {
  await writeSnapshot(dir, testSnapshot({ ...plainAt(5), anchors: new Map() }));
  const { logger, lines } = memoryLogger();
  assert.is(await loadNewestSnapshot({ dir, log: tenRecords(), head: new Map([[0, 10]]), logger }), undefined);
  assert.is(lines()[0]?.['reason'], 'it records no anchor for partition 0');
});

store.run();
