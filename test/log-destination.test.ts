import { closeSync, openSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bufferedDestination } from '../src/log-destination.js';
import { createLogger, flushLogger } from '../src/logger.js';
import { withTimeout } from './helpers/async.js';
import { tempDir } from './helpers/server.js';

const destination = suite<{ dir: string; file: string; fd: number }>('bufferedDestination');

destination.before.each(async (context) => {
  context.dir = await tempDir();
  context.file = join(context.dir, 'out.log');
  context.fd = openSync(context.file, 'a');
});
destination.after.each(async ({ dir, fd }) => {
  try {
    closeSync(fd);
  } catch {
    // closed by the test
  }
  await rm(dir, { recursive: true, force: true });
});

const flushed = (target: { flush(done: () => void): void }) => withTimeout(new Promise<void>((resolve) => target.flush(resolve)), 2000, 'the flush');

destination('keeps lines in memory until a batch is full, then writes them in order', async ({ fd, file }) => {
  const out = bufferedDestination(fd, { flushMs: 60_000, batchChars: 20 });
  out.write('one\n');
  out.write('two\n');
  assert.is(readFileSync(file, 'utf8'), '');
  out.write('three and more\n');
  await flushed(out);
  assert.is(readFileSync(file, 'utf8'), 'one\ntwo\nthree and more\n');
});

destination('writes a line that waits alone once the flush interval has passed', async ({ fd, file }) => {
  const out = bufferedDestination(fd, { flushMs: 10, batchChars: 1 << 20 });
  out.write('lonely ünïcode line\n');
  await withTimeout(
    (async () => {
      while (readFileSync(file, 'utf8') === '') await new Promise((resolve) => setTimeout(resolve, 5));
    })(),
    2000,
    'the timed write',
  );
  assert.is(readFileSync(file, 'utf8'), 'lonely ünïcode line\n');
});

destination('flushSync writes every pending line at once', ({ fd, file }) => {
  const out = bufferedDestination(fd, { flushMs: 60_000, batchChars: 1 << 20 });
  out.write('a\n');
  out.write('b\n');
  out.flushSync();
  assert.is(readFileSync(file, 'utf8'), 'a\nb\n');
});

destination('a destination that fails drops its lines and still answers flush', async ({ fd }) => {
  const out = bufferedDestination(fd, { flushMs: 60_000, batchChars: 1 });
  closeSync(fd);
  out.write('nowhere\n');
  await flushed(out);
  out.write('nowhere either\n');
  out.flushSync();
});

destination('createLogger writes a stream with a file descriptor through it, and flushLogger waits for the lines', async ({ fd, file }) => {
  const logger = createLogger('info', { fd, write: () => assert.unreachable('lines must not go through the stream itself') } as unknown as NodeJS.WritableStream);
  logger.info({ route: '/reports' }, 'request');
  logger.debug('below the level');
  await withTimeout(flushLogger(logger), 2000, 'flushLogger');
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(lines.map(({ msg, route }) => ({ msg, route })), [{ msg: 'request', route: '/reports' }]);
});

destination.run();
