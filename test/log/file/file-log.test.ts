import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, realpath, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordTooLargeError, type LogMessage } from '../../../src/log/event-log.js';
import { FILE_MAGIC } from '../../../src/log/file/frames.js';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { collect, rejection, withTimeout } from '../../helpers/async.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { followRecords, readRecords } from '../../../src/log/record-batches.js';
import { descriptorsOf, hasSynchronizedWrites } from '../../helpers/descriptors.js';

const message = (key: string, value: string): LogMessage => ({ key, value: Buffer.from(value, 'utf8') });
const quiet = () => memoryLogger().logger;

const fileLog = suite<{ dir: string }>('openFileLog');
fileLog.before.each(async (context) => {
  context.dir = await tempDir('reports-file-log-');
});
fileLog.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

fileLog('starts a new log file with the magic bytes and no records', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  assert.equal(await log.head(), new Map([[0, 0]]));
  await log.close();
  assert.ok((await readFile(join(dir, 'events.log'))).equals(FILE_MAGIC));
});

fileLog('refuses a record larger than one frame holds with RecordTooLargeError, writing nothing', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const huge = { key: '1', value: Buffer.alloc(log.maxRecordBytes) };
  const error = await rejection(log.append([message('2', 'fits'), huge]));
  assert.instance(error, RecordTooLargeError);
  assert.is((error as RecordTooLargeError).limitBytes, log.maxRecordBytes);
  assert.equal(await log.head(), new Map([[0, 0]]));
  await log.close();
});

fileLog('keeps every record, key, value and timestamp across close and reopen', async ({ dir }) => {
  let clock = 1_700_000_000_000;
  const first = await openFileLog({ dir, logger: quiet(), now: () => (clock += 1) });
  const sent = [message('1', 'one'), message('-2', 'two'), message('1', 'three')];
  await first.append(sent.slice(0, 2));
  await first.append(sent.slice(2));
  const before = await collect(readRecords(first, new Map()));
  await first.close();

  const second = await openFileLog({ dir, logger: quiet() });
  const after = await collect(readRecords(second, new Map()));
  assert.equal(after, before);
  assert.equal(
    after.map((r) => [r.key, r.value.toString('utf8'), r.position.offset]),
    [
      ['1', 'one', 0],
      ['-2', 'two', 1],
      ['1', 'three', 2],
    ],
  );
  assert.equal(
    after.map((r) => r.timestampMs),
    [1_700_000_000_001, 1_700_000_000_001, 1_700_000_000_002],
  );
  await second.close();
});

fileLog('continues the offsets after a reopen', async ({ dir }) => {
  const first = await openFileLog({ dir, logger: quiet() });
  await first.append([message('1', 'a'), message('2', 'b')]);
  await first.close();
  const second = await openFileLog({ dir, logger: quiet() });
  assert.equal(await second.append([message('3', 'c')]), [{ partition: 0, offset: 2 }]);
  assert.equal(await second.head(), new Map([[0, 3]]));
  await second.close();
});

fileLog('logs how many records it found when opening', async ({ dir }) => {
  const first = await openFileLog({ dir, logger: quiet() });
  await first.append([message('1', 'a'), message('2', 'b')]);
  await first.close();
  const { logger, lines } = memoryLogger();
  const second = await openFileLog({ dir, logger });
  await second.close();
  assert.ok(
    lines().some((line) => line['msg'] === 'opened the embedded event log' && line['records'] === 2),
    JSON.stringify(lines()),
  );
});

fileLog('reads records larger than one read chunk', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const big = 'x'.repeat(1024 * 1024 + 17);
  await log.append([message('1', 'small'), message('2', big), message('3', 'after')]);
  const read = await collect(readRecords(log, new Map()));
  assert.equal(
    read.map((r) => r.value.length),
    [5, big.length, 5],
  );
  await log.close();
  const reopened = await openFileLog({ dir, logger: quiet() });
  assert.equal(
    (await collect(readRecords(reopened, new Map([[0, 1]])))).map((r) => r.key),
    ['2', '3'],
  );
  await reopened.close();
});

fileLog('reports itself unavailable after close', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  await log.close();
  assert.is(log.health().available, false);
});

fileLog('ends a follow that waits for records when the log closes', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  await log.append([message('1', 'a')]);
  const iterator = followRecords(log, new Map())[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.is(first.done ? undefined : first.value.key, '1');
  const waiting = iterator.next();
  await log.close();
  assert.is((await withTimeout(waiting, 5000, 'follow() to end after close')).done, true);
});

fileLog.run();

const groupCommit = suite<{ dir: string }>('file log group commit');
groupCommit.before.each(async (context) => {
  context.dir = await tempDir('reports-group-commit-');
});
groupCommit.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

groupCommit('covers the appends of 64 concurrent callers with far fewer flushes', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const callers = 64;
  const perCaller = 16;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; i < perCaller; i += 1) await log.append([message(String(caller), `${caller}/${i}`)]);
    }),
  );
  const { appends, fsyncs } = log.stats();
  assert.is(appends, callers * perCaller);
  assert.ok(fsyncs >= 1);
  assert.ok(fsyncs <= appends / 4, `${fsyncs} fsyncs for ${appends} appends`);
  await log.close();
});

groupCommit('writes one multi-message append with one flush', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  await log.append([message('1', 'a'), message('2', 'b'), message('3', 'c')]);
  assert.equal(log.stats(), { appends: 3, fsyncs: 1, flushes: 1 });
  await log.close();
});

groupCommit('has every acknowledged append in the file when it resolves', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const sizes: number[] = [];
  for (const value of ['a', 'bb', 'ccc']) {
    await log.append([message('9', value)]);
    sizes.push((await stat(join(dir, 'events.log'))).size);
  }
  assert.ok(
    sizes[0]! > FILE_MAGIC.length && sizes[0]! < sizes[1]! && sizes[1]! < sizes[2]!,
    `sizes ${sizes.join(', ')}`,
  );
  await log.close();
});

groupCommit(
  'writes its batches through a descriptor whose writes are on disk when they return (O_DSYNC)',
  async ({ dir }) => {
    const path = join(await realpath(dir), 'events.log');
    const log = await openFileLog({ dir, logger: quiet() });
    try {
      await log.append([message('1', 'a')]);
      const writers = descriptorsOf(path);
      assert.ok(writers.length > 0, `no descriptor of this process is open on ${path}`);
      // Every descriptor on the log is synchronized, so whichever one a batch goes through is durable.
      assert.equal(
        writers.filter((fd) => !hasSynchronizedWrites(fd)),
        [],
      );
    } finally {
      await log.close();
    }
    assert.equal(descriptorsOf(path), [], 'close releases the descriptor');
  },
);

groupCommit('drops an append whose signal aborted while an earlier batch was being written', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const controller = new AbortController();
  const first = log.append([message('1', 'written')]);
  // The first batch is in flight now; this one waits for the next batch and is given up on before it.
  // Rejected as soon as the signal aborts, so the rejection is caught from the start.
  const dropped = rejection(log.append([message('2', 'dropped')], { signal: controller.signal }));
  const kept = log.append([message('3', 'kept')]);
  controller.abort();
  assert.equal(await first, [{ partition: 0, offset: 0 }]);
  assert.instance(await dropped, DOMException);
  assert.equal(await kept, [{ partition: 0, offset: 1 }]);
  assert.equal(
    (await collect(readRecords(log, new Map()))).map((r) => r.key),
    ['1', '3'],
  );
  await log.close();
});

groupCommit('does not append an empty message list', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  assert.equal(await log.append([]), []);
  assert.equal(log.stats(), { appends: 0, fsyncs: 0, flushes: 0 });
  await log.close();
});

groupCommit.run();
