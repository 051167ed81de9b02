// Folding a file-log history on several threads gives what folding it on one thread gives: the
// same reports, versions of live and deleted ids, idempotency keys (the first event to carry a key
// owns it, whichever thread folded it), counts and skipped records, for either log format and any
// stopping point; a record whose key is not its report's id makes the fold fall back to one thread.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { EventLog, LogMessage, LogPosition } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import { Projector } from '../../src/projector/projector.js';
import { createReadModel, type ReadModel } from '../../src/read-model/read-model.js';
import { foldSharded } from '../../src/read-model/sharded-fold.js';
import { foldLog, SHARDED_FOLD_RECORDS, stateDigest, type FoldProgress } from '../../src/projector/fold-log.js';
import { withTimeout } from '../helpers/async.js';
import { created, deleted } from '../helpers/events.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const RECORDS = SHARDED_FOLD_RECORDS + 5000;

function keyed(event: ReportEvent, idempotencyKey: string): ReportEvent {
  return { ...event, data: { ...event.data, idempotencyKey } } as ReportEvent;
}

/** Report n's id: a third of them snowflake-sized. */
function idOf(n: number): string {
  return n % 3 === 0 ? String(7_000_000_000_000_000_000n + BigInt(n)) : String(n);
}

/**
 * Creates (some keyed), deletes, void events and invalid records mixed; idempotency keys reused by
 * events of other reports later on (so of other shards), non-ASCII names for decodeEvent's path.
 */
function history(): LogMessage[] {
  const messages: LogMessage[] = [];
  const event = (e: ReportEvent) => messages.push({ key: e.subject, value: encodeEvent(e) });
  for (let i = 0; i < RECORDS; i += 1) {
    const id = idOf(i % 3001);
    if (i % 97 === 0)
      messages.push({ key: id, value: Buffer.from(i % 2 === 0 ? 'not json' : '{"type":"ReportCreated"}') });
    else if (i % 5 === 0) event(i % 10 === 0 ? keyed(deleted(id), `key-${i % 400}`) : deleted(id));
    else if (i % 11 === 0) event(keyed(created(id, `keyed ${i}`, 't'), `key-${i % 400}`));
    else event(created(id, `report ${i}${i % 7 === 0 ? ' ünï' : ''}`, i % 3 === 0 ? undefined : 'tag'));
  }
  return messages;
}

async function oneThread(
  log: EventLog,
  to?: ReadonlyMap<number, number>,
): Promise<{ model: ReadModel; skipped: string[] }> {
  const model = createReadModel();
  const skipped: string[] = [];
  await foldLog(log, model, {
    ...(to ? { to } : {}),
    onSkipped: (position, reason) => skipped.push(`${position.offset}:${reason}`),
  });
  return { model, skipped };
}

/** Every id's version, deleted ones included. */
function versions({ reports }: ReadModel): number[] {
  return Array.from({ length: 3001 }, (_, n) => reports.version(idOf(n)));
}

function assertSameModel(actual: ReadModel, expected: ReadModel): void {
  assert.is(stateDigest(actual.reports), stateDigest(expected.reports));
  assert.equal(versions(actual), versions(expected));
  assert.is(actual.reports.deletedIds, expected.reports.deletedIds);
  assert.equal(actual.keys, expected.keys);
  assert.equal(actual.counts, expected.counts);
  assert.equal(actual.cursor, expected.cursor);
}

const sharded = suite<{ dir: string; log: FileLog }>('folding a file log on several threads');

sharded.before.each(async (context) => {
  context.dir = await tempDir('reports-sharded-');
  context.log = await openFileLog({ dir: context.dir, logger: memoryLogger().logger });
  // Several appends, so the history spans several batches of the file log.
  const messages = history();
  for (let at = 0; at < messages.length; at += 4000) await context.log.append(messages.slice(at, at + 4000));
});
sharded.after.each(async ({ dir, log }) => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

sharded(
  'gives the same model, keys, counts and skipped records as one thread, on 1, 2 and 3 threads',
  async ({ log }) => {
    const alone = await oneThread(log);
    assert.ok(
      alone.model.counts.invalid > 0 &&
        alone.model.counts.voidEvents > 0 &&
        alone.model.keys.size > 0 &&
        alone.model.reports.deletedIds > 0,
    );
    for (const threads of [1, 2, 3]) {
      const model = createReadModel();
      const skipped: string[] = [];
      const progress: FoldProgress[] = [];
      await foldLog(log, model, {
        threads,
        onSkipped: (position, reason) => skipped.push(`${position.offset}:${reason}`),
        onProgress: (step) => progress.push(step),
      });
      assertSameModel(model, alone.model);
      assert.equal(skipped, alone.skipped, `skipped records on ${threads} threads`);
      assert.equal(progress.at(-1)?.records, RECORDS);
      assert.ok(progress.at(-1)?.lastTimestampMs !== undefined);
    }
  },
);

sharded('really folds on the threads: the sharded fold itself gives the one-thread model', async ({ log }) => {
  const range = await log.fileRange?.(RECORDS);
  assert.ok(range !== undefined);
  const folded = await foldSharded(range, { threads: 2 });
  assert.is(folded.kind, 'folded');
  if (folded.kind !== 'folded') return;
  assertSameModel(folded.model, (await oneThread(log)).model);
});

sharded(
  'stops where it is told, in the middle of a batch, and the one-thread fold goes on from there',
  async ({ log }) => {
    const to = new Map([[0, RECORDS - 1234]]);
    const model = createReadModel();
    await foldLog(log, model, { to, threads: 2 });
    assertSameModel(model, (await oneThread(log, to)).model);
    await foldLog(log, model, { threads: 2 });
    assertSameModel(model, (await oneThread(log)).model);
  },
);

sharded('falls back to one thread when a record is filed under a key that is not its report id', async ({ log }) => {
  const stray = created('1', 'filed under another key');
  await log.append([{ key: 'not-the-id', value: encodeEvent(stray) }]);
  const range = await log.fileRange?.(RECORDS + 1);
  assert.ok(range !== undefined);
  const folded = await foldSharded(range, { threads: 4 });
  assert.equal(folded, { kind: 'misrouted', offset: RECORDS });
  const model = createReadModel();
  await foldLog(log, model, { threads: 4 });
  assertSameModel(model, (await oneThread(log)).model);
});

sharded(
  'folds on one thread when the threads fail (here: the file they are told to read is not there), and says why',
  async ({ log, dir }) => {
    const range = await log.fileRange?.(RECORDS);
    assert.ok(range !== undefined);
    const elsewhere = { ...range, path: join(dir, 'missing.log') };
    const failure = await foldSharded(elsewhere, { threads: 2 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.match(String(failure), /missing\.log/);
    const broken: EventLog = Object.assign(Object.create(log) as EventLog, {
      fileRange: () => Promise.resolve(elsewhere),
    });
    const model = createReadModel();
    const told: unknown[] = [];
    await foldLog(broken, model, { threads: 2, onThreadsFailed: (error) => told.push(error) });
    assertSameModel(model, (await oneThread(log)).model);
    assert.is(told.length, 1, 'the failure of the threads is told, not hidden');
    assert.match(String(told[0]), /missing\.log/);
  },
);

sharded('an aborted sharded fold leaves the model empty', async ({ log }) => {
  const stop = new AbortController();
  const model = createReadModel();
  await foldLog(log, model, { threads: 2, signal: stop.signal, onProgress: () => stop.abort() });
  assert.is(model.reports.size, 0);
  assert.is(model.counts.records, 0);
});

sharded(
  'a projector with fold threads catches up at start, reports skipped records and then follows new ones',
  async ({ log }) => {
    const { logger, lines } = memoryLogger();
    const projector = new Projector({ log, logger, foldThreads: 2 });
    projector.start();
    try {
      await withTimeout(projector.caughtUp(), 20_000, 'the catch-up on threads');
      assertSameModel(projector.model, (await oneThread(log)).model);
      const skipped = lines().filter((line) => line['msg'] === 'skipped a record that is not a valid report event');
      assert.is(skipped.length, projector.model.counts.invalid);
      assert.is(skipped[0]?.['offset'], 0);
      const event = created('99999', 'after the catch-up');
      const [position] = await log.append([{ key: event.subject, value: encodeEvent(event) }]);
      assert.is(await projector.waitFor(position as LogPosition, 5000), 'created');
    } finally {
      await projector.stop();
    }
  },
);

sharded.run();
