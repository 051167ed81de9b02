// Group-commit batches on disk: a batch is kept or cut whole. Damage inside the last batch is a
// write that was never acknowledged; damage before a whole batch stops the start. A log of
// another format is refused, and left as it is.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogMessage } from '../../../src/log/event-log.js';
import { BATCH_HEADER_BYTES, encodeBatch, encodeMessageBatch, findWholeBatch } from '../../../src/log/file/batches.js';
import { encodeFrame } from '../../../src/log/file/frames.js';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { openFileLogReader } from '../../../src/log/file/file-log-reader.js';
import { CorruptLogError, UnknownLogFormatError } from '../../../src/log/file/recovery.js';
import { collect, rejection } from '../../helpers/async.js';
import { flipByte } from '../../helpers/file-history.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { readRecords } from '../../../src/log/record-batches.js';

const message = (key: string): LogMessage => ({
  key,
  value: Buffer.from(`value of record ${key}, long enough to matter`),
});
const quiet = () => memoryLogger().logger;

interface Context {
  dir: string;
  path: string;
  /** File size before each append: where each batch starts. */
  batchStarts: number[];
}

/** Appends each group of keys as one batch. */
async function writeBatches(context: Context, batches: readonly string[][]): Promise<void> {
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  for (const keys of batches) {
    context.batchStarts.push((await stat(context.path)).size);
    await log.append(keys.map(message));
  }
  await log.close();
}

async function keysIn(dir: string): Promise<string[]> {
  const log = await openFileLog({ dir, logger: quiet() });
  const keys = (await collect(readRecords(log, new Map()))).map((record) => record.key);
  await log.close();
  return keys;
}

/** Byte `n` into the frame of record `index` of a batch (frames are the same size here). */
function intoFrame(context: Context, batch: number, index: number, n: number): number {
  return (
    (context.batchStarts[batch] as number) +
    BATCH_HEADER_BYTES +
    index * encodeFrame({ ...message('x'), timestampMs: 0 }).length +
    n
  );
}

const batches = suite<Context>('file log group-commit batches');
batches.before.each(async (context) => {
  context.dir = await tempDir('reports-batches-');
  context.path = join(context.dir, 'events.log');
  context.batchStarts = [];
});
batches.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

batches(
  'a corrupt frame inside the last batch, followed by valid frames of that batch, is cut with the whole batch',
  async (context) => {
    await writeBatches(context, [['a'], ['b'], ['c', 'd', 'e']]);
    await flipByte(context.path, intoFrame(context, 2, 1, 30));
    const { logger, lines } = memoryLogger();
    const log = await openFileLog({ dir: context.dir, logger });
    assert.equal(
      (await collect(readRecords(log, new Map()))).map((record) => record.key),
      ['a', 'b'],
    );
    const warning = lines().find((line) => line['level'] === 40);
    assert.is(warning?.['bytePosition'], context.batchStarts[2]);
    assert.is(warning?.['recordOffset'], 2);
    assert.is((await stat(context.path)).size, context.batchStarts[2]);
    await log.close();
  },
);

batches('a damaged header of the last batch is cut as a torn write', async (context) => {
  await writeBatches(context, [['a'], ['b', 'c']]);
  await flipByte(context.path, (context.batchStarts[1] as number) + 5);
  assert.equal(await keysIn(context.dir), ['a']);
});

batches('corruption two batches back refuses the start, naming the batch position and the record', async (context) => {
  await writeBatches(context, [['a'], ['b', 'c'], ['d'], ['e']]);
  await flipByte(context.path, intoFrame(context, 1, 1, 30));
  const error = await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
  assert.instance(error, CorruptLogError);
  assert.is((error as CorruptLogError).bytePosition, context.batchStarts[1]);
  assert.is((error as CorruptLogError).recordOffset, 1);
  assert.match((error as Error).message, `byte ${context.batchStarts[1]}`);
});

batches(
  'a log of another format is refused by the writer and the reader, naming the file and the format, and left as it is',
  async (context) => {
    const frame = encodeFrame({ ...message('a'), timestampMs: 1_700_000_000_000 });
    const bytes = Buffer.concat([Buffer.from('RSLOG\u0000\u0001\n', 'latin1'), frame]);
    await writeFile(context.path, bytes);
    for (const opening of [
      () => openFileLog({ dir: context.dir, logger: quiet() }),
      () => openFileLogReader({ dir: context.dir, logger: quiet() }),
    ]) {
      const error = await rejection(opening());
      assert.instance(error, UnknownLogFormatError);
      assert.is(
        (error as Error).message,
        `${context.path} is a report store log of format 1; this version reads format 2 only`,
      );
    }
    assert.ok((await readFile(context.path)).equals(bytes), 'the refused file was changed');
  },
);

batches('a reader beside the writer takes in batches as they are appended', async (context) => {
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  const reader = await openFileLogReader({ dir: context.dir, logger: quiet() });
  await log.append(['a', 'b'].map(message));
  await log.append(['c'].map(message));
  assert.equal(
    (await collect(readRecords(reader, new Map()))).map((record) => record.key),
    ['a', 'b', 'c'],
  );
  await reader.close();
  await log.close();
});

batches('a group commit encoded in one buffer is the batch of its frames encoded one by one', () => {
  const messages = [
    message('1'),
    { key: 'é-ключ', value: Buffer.from('ünïcödé value') },
    { key: '', value: Buffer.alloc(0) },
  ];
  const { bytes, frameBytes } = encodeMessageBatch(messages, 1_700_000_000_123);
  const frames = messages.map((m) => encodeFrame({ ...m, timestampMs: 1_700_000_000_123 }));
  assert.ok(bytes.equals(encodeBatch(frames)));
  assert.equal(
    frameBytes,
    frames.map((frame) => frame.length),
  );
});

batches.run();

const search = suite<{ dir: string }>('findWholeBatch');
search.before.each(async (context) => {
  context.dir = await tempDir('reports-batch-search-');
});
search.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

search(
  'finds a whole batch after garbage that holds batch marks with bad headers and a batch cut short',
  async ({ dir }) => {
    const batch = encodeBatch([encodeFrame({ ...message('z'), timestampMs: 0 })]);
    const fakeMarks = Buffer.from('RSBC'.repeat(5000) + 'RSBC\u0000\u0000\u0000\u0001', 'latin1');
    const cutShort = batch.subarray(0, batch.length - 1);
    const bytes = Buffer.concat([fakeMarks, cutShort, Buffer.alloc(2 * 1024 * 1024, 0x41), batch]);
    const path = join(dir, 'tail');
    await writeFile(path, bytes);
    const file = await open(path, 'r');
    assert.is(await findWholeBatch(file, 0, bytes.length), bytes.length - batch.length);
    assert.is(await findWholeBatch(file, 0, bytes.length - 1), undefined);
    await file.close();
  },
);

search.run();
