// The read-only file log the CLI uses next to a running server: no lock, no repair, and it sees
// what the writer appends after it opened.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFile, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileLog, type FileLog } from '../../../src/log/file/file-log.js';
import { openFileLogReader } from '../../../src/log/file/file-log-reader.js';
import { CorruptLogError } from '../../../src/log/file/recovery.js';
import { collect, rejection, withTimeout } from '../../helpers/async.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { followRecords, readRecords } from '../../../src/log/record-batches.js';

const quiet = () => memoryLogger().logger;
const message = (key: string) => ({ key, value: Buffer.from(`value ${key}`) });

const reader = suite<{ dir: string; writer: FileLog }>('openFileLogReader');

reader.before.each(async (context) => {
  context.dir = await tempDir('reports-reader-');
  context.writer = await openFileLog({ dir: context.dir, logger: quiet() });
});
reader.after.each(async ({ dir, writer }) => {
  await writer.close();
  await rm(dir, { recursive: true, force: true });
});

reader('opens while a writer holds the directory, and does not take the lock', async ({ dir, writer }) => {
  await writer.append([message('1')]);
  const log = await openFileLogReader({ dir, logger: quiet() });
  assert.equal(await log.head(), new Map([[0, 1]]));
  await log.close();
  await writer.append([message('2')]);
});

reader('sees records the writer appends after it opened, in read and in head', async ({ dir, writer }) => {
  const log = await openFileLogReader({ dir, logger: quiet() });
  await writer.append([message('1'), message('2')]);
  assert.equal(await log.head(), new Map([[0, 2]]));
  const records = await collect(readRecords(log, new Map()));
  assert.equal(
    records.map((r) => r.key),
    ['1', '2'],
  );
  await log.close();
});

reader('follow yields records appended later by the writer', async ({ dir, writer }) => {
  const log = await openFileLogReader({ dir, logger: quiet(), pollMs: 20 });
  const abort = new AbortController();
  const seen: string[] = [];
  const following = (async () => {
    for await (const record of followRecords(log, new Map(), { signal: abort.signal })) {
      seen.push(record.key);
      if (seen.length === 3) abort.abort();
    }
  })();
  await writer.append([message('a')]);
  await writer.append([message('b'), message('c')]);
  await withTimeout(following, 5000, 'follow');
  assert.equal(seen, ['a', 'b', 'c']);
  await log.close();
});

reader('refuses to append', async ({ dir }) => {
  const log = await openFileLogReader({ dir, logger: quiet() });
  const error = await rejection(log.append([message('1')]));
  assert.match((error as Error).message, 'reading only');
  await log.close();
});

reader('stops before an incomplete last frame without cutting it', async ({ dir, writer }) => {
  await writer.append([message('1')]);
  const path = join(dir, 'events.log');
  await appendFile(path, Buffer.from([0, 0, 0, 40, 1, 2]));
  const size = (await stat(path)).size;
  const log = await openFileLogReader({ dir, logger: quiet() });
  assert.equal(await log.head(), new Map([[0, 1]]));
  assert.is((await stat(path)).size, size);
  await log.close();
});

reader('refuses a log with damage followed by valid records', async ({ dir, writer }) => {
  await writer.append([message('1')]);
  await writer.append([message('2')]);
  const file = await open(join(dir, 'events.log'), 'r+');
  await file.write(Buffer.from('X'), 0, 1, 20);
  await file.close();
  assert.instance(await rejection(openFileLogReader({ dir, logger: quiet() })), CorruptLogError);
});

reader('names the missing log when the directory holds none', async () => {
  const empty = await tempDir('reports-reader-empty-');
  const error = await rejection(openFileLogReader({ dir: empty, logger: quiet() }));
  assert.match((error as Error).message, 'no event log');
  await rm(empty, { recursive: true, force: true });
});

reader.run();
