// events.log gone or emptied while keys.db holds keys (deleted, truncated, or left behind in a move): the start stops with
// one line rather than serve an empty store whose start-up sweep would destroy every key as unused
// (then even the log put back could not be read). A first start cut short between creating keys.db
// and events.log (no key in it yet) still starts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, readFile, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { EventLogMissingError } from '../../../src/log/file/open-log-file.js';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { rejection } from '../../helpers/async.js';
import { reports } from '../../helpers/cli.js';
import { created } from '../../helpers/events.js';
import { appendSealedToFileLog } from '../../helpers/sealed-history.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';

const missing = suite<{ dir: string }>('file log: events.log missing at open');

missing.before.each(async (context) => {
  context.dir = await tempDir('reports-missing-log-');
});
missing.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

missing('stops the open and the start while keys.db holds keys, and leaves keys.db as it was', async ({ dir }) => {
  await appendSealedToFileLog(dir, [created('1', 'kept'), created('2', 'kept too')]);
  await rm(join(dir, 'events.log'));
  const keysBefore = await readFile(join(dir, 'keys.db'));
  const error = await rejection(openFileLog({ dir, logger: memoryLogger().logger }));
  assert.instance(error, EventLogMissingError);
  assert.is((error as EventLogMissingError).keySlots, 2);
  const { code, stderr } = await reports(['serve'], { env: { REPORTS_DATA_DIR: dir, PORT: '0' } });
  assert.is(code, 1);
  assert.match(stderr, `${join(dir, 'events.log')} is missing, but keys.db beside it holds 2 key slots`);
  assert.equal(await readFile(join(dir, 'keys.db')), keysBefore, 'no key destroyed');
  assert.ok(
    await readFile(join(dir, 'events.log')).then(
      () => false,
      () => true,
    ),
    'no empty log created in its place',
  );
});

missing('stops the start when events.log was emptied, and leaves keys.db as it was', async ({ dir }) => {
  await appendSealedToFileLog(dir, [created('1', 'kept')]);
  await truncate(join(dir, 'events.log'), 0);
  const keysBefore = await readFile(join(dir, 'keys.db'));
  const error = await rejection(openFileLog({ dir, logger: memoryLogger().logger }));
  assert.instance(error, EventLogMissingError);
  assert.match(
    (error as Error).message,
    `${join(dir, 'events.log')} is empty (shorter than its magic bytes), but keys.db beside it holds 1 key slot `,
  );
  assert.equal(await readFile(join(dir, 'keys.db')), keysBefore, 'no key destroyed');
});

missing('opens when keys.db holds no key yet (a first start cut short before events.log was made)', async ({ dir }) => {
  const first = await openFileLog({ dir, logger: memoryLogger().logger });
  await first.close();
  await rm(join(dir, 'events.log'));
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    assert.equal(await log.append([{ key: '3', value: Buffer.from('{}') }]).then((positions) => positions.length), 1);
  } finally {
    await log.close();
  }
});

missing('names a directory in place of keys.db, as it does one in place of events.log', async ({ dir }) => {
  await mkdir(join(dir, 'keys.db'), { recursive: true });
  const error = await rejection(openFileLog({ dir, logger: memoryLogger().logger }));
  assert.is((error as Error).message, `${join(dir, 'keys.db')} is a directory, not a regular file`);
});

missing.run();
