// Folding with the decode pool gives the same read model, counts and per-record outcomes as
// folding on one thread: invalid records included, in order, and waiters see every outcome.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { LogMessage, LogRecord } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file-log.js';
import { Projector } from '../../src/projector.js';
import { startDecodePool } from '../../src/read-model/decode-pool.js';
import { createReadModel, type Applied } from '../../src/read-model/read-model.js';
import { foldLog, stateDigest } from '../../src/replay.js';
import { withTimeout } from '../helpers/async.js';
import { created, deleted } from '../helpers/events.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const RECORDS = 3000;

/** A history with creates (some keyed), deletes, void events and invalid records mixed in. */
function history(): LogMessage[] {
  const messages: LogMessage[] = [];
  const event = (e: ReportEvent) => messages.push({ key: e.subject, value: encodeEvent(e) });
  for (let i = 0; i < RECORDS; i += 1) {
    const id = String(i % 700);
    if (i % 97 === 0) messages.push({ key: id, value: Buffer.from(i % 2 === 0 ? 'not json' : '{"type":"ReportCreated"}') });
    else if (i % 5 === 0) event(deleted(id));
    else if (i % 11 === 0) event({ ...created(id, `keyed ${i}`, 't'), data: { id, name: `keyed ${i}`, tag: 't', idempotencyKey: `key-${i}` } });
    else event(created(id, `report ${i} ünï`, i % 3 === 0 ? undefined : 'tag'));
  }
  return messages;
}

const parallel = suite<{ dir: string; log: FileLog }>('folding with the decode pool');

parallel.before.each(async (context) => {
  context.dir = await tempDir('reports-parallel-');
  context.log = await openFileLog({ dir: context.dir, logger: memoryLogger().logger });
  // Several appends, so the history spans several batches of the file log.
  const messages = history();
  for (let at = 0; at < messages.length; at += 700) await context.log.append(messages.slice(at, at + 700));
});
parallel.after.each(async ({ dir, log }) => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

parallel('gives the same model, counts and outcomes as a fold on one thread', async ({ log }) => {
  const outcomes = (into: string[]) => (record: LogRecord, applied: Applied) => into.push(`${record.position.offset}:${applied.kind}`);
  const alone = createReadModel();
  const aloneOutcomes: string[] = [];
  await foldLog(log, alone, { onRecord: outcomes(aloneOutcomes) });
  const pool = startDecodePool(2);
  const pooled = createReadModel();
  const pooledOutcomes: string[] = [];
  try {
    await foldLog(log, pooled, { pool, onRecord: outcomes(pooledOutcomes) });
  } finally {
    await pool.close();
  }
  assert.equal(pooledOutcomes, aloneOutcomes);
  assert.equal(pooled.counts, alone.counts);
  assert.ok(alone.counts.invalid > 0 && alone.counts.voidEvents > 0);
  assert.equal(pooled.cursor, alone.cursor);
  assert.equal(pooled.keys, alone.keys);
  assert.is(stateDigest(pooled.reports), stateDigest(alone.reports));
});

parallel('is used by a projector whose catch-up is long enough, which then follows new records', async ({ log }) => {
  const { logger, lines } = memoryLogger();
  const projector = new Projector({ log, logger, decodePool: { threads: 2, minRecords: 1000 } });
  projector.start();
  try {
    await withTimeout(projector.caughtUp(), 20_000, 'the parallel catch-up');
    const alone = createReadModel();
    let lastOutcome = '';
    await foldLog(log, alone, { onRecord: (_record, applied) => (lastOutcome = applied.kind) });
    assert.is(stateDigest(projector.model.reports), stateDigest(alone.reports));
    assert.equal(projector.model.counts, alone.counts);
    assert.ok(lines().some((line) => line['msg'] === 'skipped a record that is not a valid report event'));
    assert.is(await projector.waitFor({ partition: 0, offset: RECORDS - 1 }, 1000), lastOutcome, 'the outcome of the last record folded in parallel');
    const event = created('9999', 'after the catch-up');
    const [position] = await log.append([{ key: event.subject, value: encodeEvent(event) }]);
    assert.is(await projector.waitFor(position ?? { partition: 0, offset: -1 }, 5000), 'created');
  } finally {
    await projector.stop();
  }
});

parallel('refuses work once closed', async () => {
  const pool = startDecodePool(1);
  await pool.close();
  try {
    await pool.decode([]);
    assert.unreachable('decode after close');
  } catch (error) {
    assert.match(String(error), /closed/);
  }
});

parallel.run();
