import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { openSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, flushLogger } from '../src/logger.js';
import { withTimeout } from './helpers/async.js';
import { tempDir } from './helpers/server.js';

function capture(): { write(line: string): void; lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line) => void lines.push(line) };
}

const logger = suite('createLogger');

logger('writes the request line with its keys in order, the level as a number and the time in ms', () => {
  const out = capture();
  createLogger('info', out).info({ method: 'POST', route: '/reports/:id', status: 204, durationMs: 1.234 }, 'request');
  assert.is(out.lines.length, 1);
  const line = out.lines[0] ?? '';
  assert.match(
    line,
    /^\{"level":30,"time":\d{13},"service":"report-store","method":"POST","route":"\/reports\/:id","status":204,"durationMs":1.234,"msg":"request"\}\n$/,
  );
});

logger('redacts an authorization header or a token wherever a line would carry one', () => {
  const out = capture();
  createLogger('info', out).info({ authorization: 'Bearer secret-1', token: 'secret-2' }, 'request');
  assert.not.match(out.lines.join(''), /secret/);
  assert.equal(JSON.parse(out.lines[0] ?? ''), {
    ...JSON.parse(out.lines[0] ?? ''),
    authorization: '[Redacted]',
    token: '[Redacted]',
  });
});

logger('writes nothing below its level', () => {
  const out = capture();
  createLogger('warn', out).info({ method: 'GET' }, 'request');
  assert.equal(out.lines, []);
});

logger(
  'writes a stream with a file descriptor through that descriptor, and flushLogger waits for the lines',
  async () => {
    const dir = await tempDir();
    const file = join(dir, 'out.log');
    // Left open: the destination keeps writing (nothing, every 100 ms) to its descriptor, which a
    // later open in this process could otherwise be given.
    const fd = openSync(file, 'a');
    try {
      const log = createLogger('info', {
        fd,
        write: () => assert.unreachable('lines must not go through the stream itself'),
      } as unknown as NodeJS.WritableStream);
      log.info({ route: '/reports' }, 'request');
      log.debug('below the level');
      await withTimeout(flushLogger(log), 2000, 'flushLogger');
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(
        lines.map(({ msg, route }) => ({ msg, route })),
        [{ msg: 'request', route: '/reports' }],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

// A process logging 32 MiB of lines to a stdout pipe nobody reads, then, once the parent starts
// reading, flushing and exiting.
const BLOCKED_CHILD = `
const { createLogger, flushLogger } = await import(process.env.LOGGER_URL);
const log = createLogger('info', process.stdout);
const pad = 'x'.repeat(1000);
const lines = 32 * 1024;
for (let i = 0; i < lines; i++) log.info({ i, pad }, 'request');
process.stderr.write(JSON.stringify({ lines }) + '\\n');
process.stdin.resume();
process.stdin.once('data', async () => { await flushLogger(log, 10_000); process.exit(0); });
`;

logger('keeps at most 16 MiB for a stdout that does not read, and logs how many lines it dropped', async () => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BLOCKED_CHILD], {
    env: { ...process.env, LOGGER_URL: new URL('../src/logger.js', import.meta.url).href },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout.pause();
  const [report] = (await withTimeout(once(child.stderr, 'data'), 20_000, 'the child to log its lines')) as [Buffer];
  const { lines } = JSON.parse(report.toString('utf8')) as { lines: number };
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => void chunks.push(chunk)).resume();
  child.stdin.write('go\n');
  await withTimeout(once(child, 'exit'), 20_000, 'the child to exit');
  const text = Buffer.concat(chunks).toString('utf8');
  const written = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const requests = written.filter(({ msg }) => msg === 'request');
  const notices = written.filter(({ msg }) => typeof msg === 'string' && msg.startsWith('log lines dropped'));
  assert.ok(Buffer.byteLength(text) <= 16 * 1024 * 1024 + 64 * 1024, `${Buffer.byteLength(text)} bytes kept`);
  assert.ok(requests.length > 0 && requests.length < lines, `${requests.length} of ${lines} lines written`);
  assert.is(notices.length, 1);
  assert.is(notices[0]?.['droppedLines'], lines - requests.length);
  assert.is(notices[0]?.['level'], 40);
});

logger.run();
