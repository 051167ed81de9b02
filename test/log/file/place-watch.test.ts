// A data directory moved or deleted under a running writer: within about a second its log says it
// is unavailable, naming what happened, and refuses appends (503), rather than acknowledging writes
// into files nothing will read again.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LogUnavailableError } from '../../../src/log/event-log.js';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { pause } from '../../../src/pause.js';
import { rejection } from '../../helpers/async.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';

const moved = suite<{ dir: string }>('file log: its directory moved or its file replaced while it runs');

moved.before.each(async (context) => {
  context.dir = await tempDir('reports-place-');
});
moved.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
  await rm(`${dir}-moved`, { recursive: true, force: true });
});

const message = (n: number) => ({ key: String(n), value: Buffer.from(`{"n":${n}}`) });

async function unavailableWithin(log: { health(): { available: boolean; reason?: string } }, ms: number) {
  const deadline = Date.now() + ms;
  while (log.health().available && Date.now() < deadline) await pause(50);
  return log.health();
}

moved('a moved directory makes the log unavailable and appends fail, naming the path', async ({ dir }) => {
  const { logger, lines } = memoryLogger();
  const log = await openFileLog({ dir, logger });
  try {
    await log.append([message(1)]);
    await rename(dir, `${dir}-moved`);
    const health = await unavailableWithin(log, 5_000);
    assert.is(health.available, false);
    assert.match(health.reason ?? '', `${join(dir, 'events.log')} no longer exists`);
    const error = await rejection(log.append([message(2)]));
    assert.instance(error, LogUnavailableError);
    assert.ok(
      lines().some(
        (line) => line['level'] === 50 && String(line['msg']).includes('no longer where the server opened it'),
      ),
    );
  } finally {
    // Its lock went with the directory's old name: the release fails (the server logs it and stops).
    await log.close().catch(() => undefined);
  }
});

moved('a log replaced by another file makes it unavailable too', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    await log.append([message(1)]);
    await copyFile(join(dir, 'events.log'), join(dir, 'copy.log'));
    await rename(join(dir, 'copy.log'), join(dir, 'events.log'));
    const health = await unavailableWithin(log, 5_000);
    assert.match(health.reason ?? '', `${join(dir, 'events.log')} is another file now`);
  } finally {
    await log.close();
  }
});

moved('a log left where it is stays available', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    await log.append([message(1)]);
    await pause(2_500);
    assert.is(log.health().available, true);
    assert.equal((await log.append([message(2)]))[0]?.offset, 1);
  } finally {
    await log.close();
  }
});

moved.run();
