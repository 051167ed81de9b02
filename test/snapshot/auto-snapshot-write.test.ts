// The server's automatic snapshot, its idempotency keys (none here) encoded a few a millisecond and
// its file written while records go on being appended and applied (a write to an id table segment
// the snapshot holds copies it first): the file holds the model exactly as the
// log's records up to its cursor fold it (not a mix of before and after), and it carries the file
// log's resume point, taken when the model was frozen, so the next start scans only from there. A
// snapshot that fails does not stop the next one.
import { rm } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { Cursor, LogRecord } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import type { Logger } from 'pino';
import { readRecords } from '../../src/log/record-batches.js';
import { hasCommitFeed } from '../../src/log/capabilities.js';
import { applyRecord, createReadModel, type ReadModel } from '../../src/read-model/read-model.js';
import { createAutoSnapshot } from '../../src/snapshot/auto-snapshot.js';
import { MAX_UNERASED } from '../../src/snapshot/snapshot-format.js';
import { loadNewestSnapshot, snapshotDir } from '../../src/snapshot/snapshot-store.js';
import { created, deleted } from '../helpers/events.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const auto = suite('automatic snapshots written while records are applied');

const REPORTS = 60_000;
const BATCH = 1_000;

/** The fold of the log's records before `cursor` (offsets of partition 0). */
async function foldUpTo(records: AsyncIterable<LogRecord>, cursor: Cursor): Promise<ReadModel> {
  const model = createReadModel();
  const end = cursor.get(0) ?? 0;
  for await (const record of records) {
    if (record.position.offset >= end) break;
    applyRecord(model, record);
  }
  return model;
}

/** Runs `test` with a file log in a temporary directory and a logger whose lines it can read; closes and removes both after. */
async function withFileLog(
  test: (context: {
    dir: string;
    log: FileLog;
    logger: Logger;
    lines: () => Record<string, unknown>[];
  }) => Promise<void>,
): Promise<void> {
  const dir = await tempDir('reports-auto-snapshot-');
  const { logger, lines } = memoryLogger();
  const log = await openFileLog({ dir, logger });
  try {
    await test({ dir, log, logger, lines });
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
}

auto('hold the model as the log up to their cursor folds it, with the resume point of that cursor', () =>
  withFileLog(async ({ dir, log, logger, lines }) => {
    const model = createReadModel();
    const snapshots = createAutoSnapshot({
      dir: snapshotDir(dir),
      log,
      logger,
      model,
      every: 10_000,
      slices: { keys: 2, nextTurn: () => new Promise((resolve) => setTimeout(resolve, 1)) },
    });
    snapshots.onCaughtUp();
    // As the server's projector does: each durable batch is applied as the log hands it over, so the
    // model never lags the log's newest batch (a model that did would have no resume point to take).
    assert.ok(hasCommitFeed(log), 'the file log hands its commits over');
    const unsubscribe = log.onCommit((records) => {
      for (const record of records) applyRecord(model, record);
      snapshots.onApplied(records.length);
    });
    const append = (events: ReportEvent[]) =>
      log.append(events.map((event) => ({ key: event.subject, value: encodeEvent(event) })));
    for (let first = 0; first < REPORTS; first += BATCH) {
      // Every tenth event deletes a report created 10,001 events before (held when the model was frozen).
      await append(
        Array.from({ length: BATCH }, (_, i) =>
          i % 10 === 9 && first >= 10_000
            ? deleted(String(first + i - 10_001))
            : created(String(first + i), `report ${first + i}`),
        ),
      );
      await setImmediate();
    }
    // Appends go on (applied, but too few for another snapshot) while the newest snapshot is still
    // being copied and for two batches at least: its resume point cannot be found any more
    // afterwards, so the one it carries can only have been taken with the freeze.
    let copied = false;
    const idle = snapshots.idle().then(() => {
      copied = true;
    });
    for (let extra = 0; extra < 2 || !copied; extra += 1) {
      await append(
        Array.from({ length: BATCH }, (_, i) => created(String(REPORTS + extra * BATCH + i), 'after the loop')),
      );
      await setImmediate();
    }
    await idle;
    unsubscribe();
    const written = lines().filter((line) => line['msg'] === 'wrote a snapshot of the read model');
    assert.ok(written.length >= 2, `${written.length} snapshots`);
    const snapshot = await loadNewestSnapshot({ dir: snapshotDir(dir), log, head: await log.head(), logger });
    assert.ok(snapshot !== undefined);
    const cursor = snapshot.model.cursor;
    assert.ok((cursor.get(0) ?? 0) > 40_000, `the newest snapshot is of ${String(cursor.get(0))} records`);
    assert.ok(snapshot.resume !== undefined, 'the snapshot carries the resume point of its cursor');
    assert.is(
      log.resumePoint(cursor),
      undefined,
      'later batches moved the point on: it had to be taken with the freeze',
    );
    const expected = await foldUpTo(readRecords(log, new Map()), cursor);
    assert.equal(new Map(snapshot.model.reports), new Map(expected.reports));
    assert.equal(snapshot.model.counts, expected.counts);
  }),
);

auto('go on after one that failed: the next snapshot is written', () =>
  withFileLog(async ({ dir, log, logger, lines }) => {
    const model = createReadModel();
    for (let i = 0; i < 100; i += 1) model.reports.set(String(i), { name: `report ${i}` });
    // The idempotency keys cannot be encoded once (as when their text passes V8's longest string).
    const iterate = model.keys[Symbol.iterator].bind(model.keys);
    let failures = 1;
    Object.defineProperty(model.keys, Symbol.iterator, {
      value: () => {
        if (failures-- > 0) throw new RangeError('Invalid string length');
        return iterate();
      },
    });
    const snapshots = createAutoSnapshot({ dir: snapshotDir(dir), log, logger, model, every: 1 });
    snapshots.onCaughtUp();
    for (let round = 0; round < 3; round += 1) {
      snapshots.onApplied(100); // due: a quarter of the model (25) or `every` (1), whichever is more
      await snapshots.idle();
    }
    const outcomes = lines()
      .filter((line) => String(line['msg']).includes('snapshot'))
      .map((line) => line['msg']);
    assert.equal(outcomes, [
      'could not write a snapshot',
      'wrote a snapshot of the read model',
      'wrote a snapshot of the read model',
    ]);
  }),
);

auto('list the deletions not yet erased as they were when the model was taken', () =>
  withFileLog(async ({ dir, log, logger }) => {
    const model = createReadModel();
    for (let i = 0; i < 100; i += 1) model.reports.set(String(i), { name: `report ${i}` });
    const pending = [{ reportId: '7', version: 2, key: 'AAAAAAAAAAc' }];
    const snapshots = createAutoSnapshot({
      dir: snapshotDir(dir),
      log,
      logger,
      model,
      every: 1,
      slices: { keys: 1, nextTurn: () => new Promise((resolve) => setTimeout(resolve, 1)) },
      unerased: () => [...pending],
    });
    snapshots.onCaughtUp();
    snapshots.onApplied(100); // due: the model is taken now
    // Confirmed while the file is written: it was not when the model was taken, and is listed.
    pending.length = 0;
    await snapshots.idle();
    const first = await loadNewestSnapshot({ dir: snapshotDir(dir), log, head: await log.head(), logger });
    assert.equal(first?.unerased, [{ reportId: '7', version: 2, key: 'AAAAAAAAAAc' }]);
    snapshots.onApplied(100);
    await snapshots.idle();
    const next = await loadNewestSnapshot({ dir: snapshotDir(dir), log, head: await log.head(), logger });
    assert.ok(next !== undefined && next.createdAt >= (first?.createdAt ?? ''));
    assert.is(next.unerased, undefined, 'nothing left to erase is listed');
  }),
);

auto('skip a snapshot that could not list every deletion not yet erased, and write the next once they are', () =>
  withFileLog(async ({ dir, log, logger, lines }) => {
    const model = createReadModel();
    for (let i = 0; i < 100; i += 1) model.reports.set(String(i), { name: `report ${i}` });
    const pending = Array.from({ length: MAX_UNERASED + 1 }, (_, i) => ({
      reportId: String(1000 + i),
      version: 2,
      key: 'AAAAAAAAAAc',
    }));
    const snapshots = createAutoSnapshot({
      dir: snapshotDir(dir),
      log,
      logger,
      model,
      every: 1,
      unerased: () => [...pending],
    });
    snapshots.onCaughtUp();
    snapshots.onApplied(100);
    await snapshots.idle();
    assert.is(await loadNewestSnapshot({ dir: snapshotDir(dir), log, head: await log.head(), logger }), undefined);
    assert.ok(lines().some((line) => String(line['msg']).startsWith('skipped a snapshot: more deletions wait')));
    pending.length = MAX_UNERASED;
    snapshots.onApplied(100);
    await snapshots.idle();
    const written = await loadNewestSnapshot({ dir: snapshotDir(dir), log, head: await log.head(), logger });
    assert.is(written?.unerased?.length, MAX_UNERASED, 'every one listed');
  }),
);

auto.run();
