import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFile, open, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogMessage } from '../../../src/log/event-log.js';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { CorruptLogError } from '../../../src/log/file/recovery.js';
import { collect, rejection } from '../../helpers/async.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { readRecords } from '../../../src/log/record-batches.js';

const message = (key: string, value: string): LogMessage => ({ key, value: Buffer.from(value, 'utf8') });
const quiet = () => memoryLogger().logger;

interface Context {
  dir: string;
  path: string;
  /** File size after each append: ends[0] is the empty log, ends[i] the end of record i-1. */
  ends: number[];
}

/** Writes `count` records one append at a time and notes where each ends on disk. */
async function writeRecords(context: Context, count: number): Promise<void> {
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  context.ends = [(await stat(context.path)).size];
  for (let i = 0; i < count; i += 1) {
    await log.append([message(String(i), `record number ${i} with some payload`)]);
    context.ends.push((await stat(context.path)).size);
  }
  await log.close();
}

async function flipByte(path: string, position: number): Promise<void> {
  const file = await open(path, 'r+');
  const byte = Buffer.alloc(1);
  await file.read(byte, 0, 1, position);
  byte[0] = (byte[0] ?? 0) ^ 0x40;
  await file.write(byte, 0, 1, position);
  await file.close();
}

const end = (context: Context, record: number) => context.ends[record + 1] as number;
const start = (context: Context, record: number) => context.ends[record] as number;

async function keysIn(dir: string): Promise<string[]> {
  const log = await openFileLog({ dir, logger: quiet() });
  const keys = (await collect(readRecords(log, new Map()))).map((r) => r.key);
  await log.close();
  return keys;
}

const torn = suite<Context>('file log torn tail');
torn.before.each(async (context) => {
  context.dir = await tempDir('reports-torn-');
  context.path = join(context.dir, 'events.log');
  await writeRecords(context, 3);
});
torn.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

const tornCases: readonly [string, (context: Context) => Promise<void>, number, number][] = [
  ['a last record cut mid-frame', (c) => truncate(c.path, end(c, 2) - 5), 2, 2],
  ['a last record cut inside its frame header', (c) => truncate(c.path, start(c, 2) + 3), 2, 2],
  ['zeros written after the last frame', (c) => appendFile(c.path, Buffer.alloc(4096)), 3, 3],
  [
    'garbage written after the last frame',
    (c) => appendFile(c.path, Buffer.from('\u0000\u0000\u0001\u0000not a frame at all, just bytes'.repeat(20))),
    3,
    3,
  ],
];

for (const [what, damage, keptRecords, cutAtRecord] of tornCases) {
  torn(`cuts ${what}, logs the byte position and keeps ${keptRecords} records`, async (context) => {
    await damage(context);
    const cutAt = start(context, cutAtRecord);
    const { logger, lines } = memoryLogger();
    const log = await openFileLog({ dir: context.dir, logger });
    const warning = lines().find((line) => line['level'] === 40);
    assert.ok(warning, `no warning in ${JSON.stringify(lines())}`);
    assert.is(warning['bytePosition'], cutAt);
    assert.is(warning['recordOffset'], keptRecords);
    assert.is((await stat(context.path)).size, cutAt);
    assert.equal(
      (await collect(readRecords(log, new Map()))).map((r) => r.key),
      ['0', '1', '2'].slice(0, keptRecords),
    );
    await log.close();
  });
}

torn('takes new appends after the cut, and they survive a reopen', async (context) => {
  await truncate(context.path, end(context, 2) - 1);
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  assert.equal(await log.append([message('new', 'after the cut')]), [{ partition: 0, offset: 2 }]);
  await log.close();
  assert.equal(await keysIn(context.dir), ['0', '1', 'new']);
});

torn('logs nothing at warn level for an intact log', async (context) => {
  const { logger, lines } = memoryLogger();
  const log = await openFileLog({ dir: context.dir, logger });
  await log.close();
  assert.equal(
    lines().filter((line) => Number(line['level']) >= 40),
    [],
  );
});

torn('treats damage inside the last record as a torn tail', async (context) => {
  await flipByte(context.path, end(context, 2) - 3);
  assert.equal(await keysIn(context.dir), ['0', '1']);
  assert.is((await stat(context.path)).size, start(context, 2));
});

torn.run();

const corrupt = suite<Context>('file log corruption');
corrupt.before.each(async (context) => {
  context.dir = await tempDir('reports-corrupt-');
  context.path = join(context.dir, 'events.log');
  await writeRecords(context, 5);
});
corrupt.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

const corruptCases: readonly [string, number, (context: Context) => number][] = [
  ['a flipped byte in the value of record 2 of 5', 2, (c) => end(c, 2) - 4],
  ['a flipped byte in the length of record 1 of 5', 1, (c) => start(c, 1)],
  ['a flipped byte in the CRC of record 0 of 5', 0, (c) => start(c, 0) + 5],
  ['a flipped byte in record 3 of 5', 3, (c) => start(c, 3) + 12],
];

for (const [what, record, where] of corruptCases) {
  corrupt(`refuses to open for ${what}, naming its byte position and record number`, async (context) => {
    await flipByte(context.path, where(context));
    const before = await readFile(context.path);
    const error = await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
    assert.instance(error, CorruptLogError);
    const corruptError = error as CorruptLogError;
    assert.is(corruptError.bytePosition, start(context, record));
    assert.is(corruptError.recordOffset, record);
    assert.match(corruptError.message, `byte ${start(context, record)}`);
    assert.match(corruptError.message, `#${record}`);
    assert.ok((await readFile(context.path)).equals(before), 'the damaged file was changed');
  });
}

corrupt('releases the lock when it refuses to open', async (context) => {
  await flipByte(context.path, end(context, 1) - 2);
  await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
  assert.is(((await rejection(stat(join(context.dir, 'LOCK')))) as NodeJS.ErrnoException).code, 'ENOENT');
});

corrupt('refuses a file whose magic bytes are wrong', async (context) => {
  const bytes = await readFile(context.path);
  bytes.write('NOTALOG!', 0, 'latin1');
  await writeFile(context.path, bytes);
  const error = await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
  assert.instance(error, Error);
  assert.match((error as Error).message, 'bad magic');
  assert.is((await stat(context.path)).size, bytes.length);
});

corrupt('refuses a short file that is not the start of the magic bytes', async (context) => {
  await writeFile(context.path, 'XY');
  const error = await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
  assert.match((error as Error).message, 'bad magic');
});

corrupt('starts empty from a file cut inside the magic bytes (a first start that crashed)', async (context) => {
  await writeFile(context.path, 'RS');
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  assert.equal(await log.head(), new Map([[0, 0]]));
  await log.append([{ key: '1', value: Buffer.from('after') }]);
  await log.close();
  const reopened = await openFileLog({ dir: context.dir, logger: quiet() });
  assert.equal(await reopened.head(), new Map([[0, 1]]));
  await reopened.close();
});

corrupt.run();
