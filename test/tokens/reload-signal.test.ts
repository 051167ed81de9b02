// SIGHUP: a request to reload the tokens for the server (`node dist/src/main.js` and `reports
// serve`), including one that arrives before anything listens; every other `reports` command ends
// on it, as a tool does when its terminal hangs up.
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '../helpers/async.js';
import { childEnv } from '../helpers/child-server.js';
import { CLI } from '../helpers/cli.js';
import { startTestServer, tempDir } from '../helpers/server.js';

const PROCESS_SIGNALS = fileURLToPath(new URL('../../src/process-signals.js', import.meta.url));

/** A child process running `args` with node; its stdout lines, and a wait for one. */
function run(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const seen: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    seen.push(line);
    for (const waiter of [...waiters]) waiter();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const line = (matches: (line: string) => boolean, what: string) =>
    withTimeout(
      new Promise<string>((resolve) => {
        const check = () => {
          const found = seen.find(matches);
          if (found === undefined) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      }),
      15_000,
      what,
    );
  return { child, exited, line, seen };
}

const signal = suite<{ dir: string }>('SIGHUP');
signal.before.each(async (context) => {
  context.dir = await tempDir('reports-sighup-');
});
signal.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

signal(
  'is passed to listeners, one that came before any listened to the first, and never ends the process',
  async () => {
    const script = `import(${JSON.stringify(PROCESS_SIGNALS)}).then(({ processReloadSignal }) => {
    const requests = processReloadSignal();
    process.on('SIGUSR2', () => requests.subscribe((trigger) => console.log('reload ' + trigger)));
    console.log('ready');
    setInterval(() => undefined, 1000);
  });`;
    const { child, exited, line, seen } = run(['--input-type=module', '-e', script]);
    try {
      await line((text) => text === 'ready', 'the handlers to be installed');
      child.kill('SIGHUP');
      child.kill('SIGUSR2');
      await line((text) => text === 'reload SIGHUP', 'the early SIGHUP passed on');
      child.kill('SIGHUP');
      await withTimeout(
        (async () => {
          while (seen.filter((text) => text === 'reload SIGHUP').length < 2)
            await new Promise((resolve) => setTimeout(resolve, 5));
        })(),
        15_000,
        'the second SIGHUP',
      );
      assert.is(child.exitCode, null, 'still running');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  },
);

signal('reloads the tokens of `reports serve`', async ({ dir }) => {
  const file = join(dir, 'tokens');
  await writeFile(file, 'ops read,write ops-token-0123456789abcdefghij\n', { mode: 0o600 });
  const env = childEnv({ REPORTS_TOKENS: '', REPORTS_TOKENS_FILE: file, REPORTS_DATA_DIR: join(dir, 'data') });
  const { child, exited, line } = run([CLI, 'serve'], env);
  try {
    await line((text) => text.includes('"msg":"listening"'), 'the server to listen');
    child.kill('SIGHUP');
    const reload = JSON.parse(
      await line((text) => text.includes('"msg":"tokens reloaded'), 'the reload line'),
    ) as Record<string, unknown>;
    assert.is(reload['trigger'], 'SIGHUP');
    child.kill('SIGTERM');
    assert.equal(await withTimeout(exited, 15_000, 'the server to stop'), { code: 0, signal: null });
  } finally {
    child.kill('SIGKILL');
  }
});

signal('ends any other command, as a hang-up ends a tool', async ({ dir }) => {
  const server = await startTestServer({}, { dataDir: dir });
  assert.is((await server.request('/reports', { method: 'POST', json: { id: 1, name: 'one' } })).status, 200);
  await server.close();
  const { child, exited, line } = run([CLI, 'events', '--follow'], childEnv({ REPORTS_DATA_DIR: dir }));
  try {
    await line((text) => text.includes('"subject":"1"'), 'the event, printed while following');
    child.kill('SIGHUP');
    assert.equal(await withTimeout(exited, 15_000, 'the command to end'), { code: null, signal: 'SIGHUP' });
  } finally {
    child.kill('SIGKILL');
  }
});

signal.run();
