// A bad setting stops the start with one line naming the variable and exit code 2, promptly, also
// when only the machine can tell (a data directory that cannot be made, an address that is not
// ours, a port in use); and a signal stops the process at any moment of the start, also as pid 1.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Env } from '../src/config.js';
import { pause } from '../src/pause.js';
import { withTimeout } from './helpers/async.js';
import { runServerProcess, type FinishedProcess } from './helpers/child-server.js';
import { tempDir } from './helpers/server.js';

const PROCESS_SIGNALS = fileURLToPath(new URL('../src/process-signals.js', import.meta.url));

/** Asserts the one stderr line of a bad setting naming `variable`, and exit code 2. */
function assertBadSetting({ code, stderr }: FinishedProcess, variable: string): void {
  assert.is(code, 2, stderr);
  const lines = stderr.split('\n').filter((line) => line !== '');
  assert.is(lines.length, 1, stderr);
  assert.match(lines[0] ?? '', new RegExp(`^report-store: bad setting ${variable}: `));
}

const bad = suite<{ dir: string }>('a bad setting at start');
bad.before.each(async (context) => {
  context.dir = await tempDir('reports-bad-setting-');
});
bad.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

bad('REPORTS_DATA_DIR under /proc exits 2 at once naming it (no endless mkdir)', async () => {
  assertBadSetting(await runServerProcess({ REPORTS_DATA_DIR: '/proc/nope' }), 'REPORTS_DATA_DIR');
  assertBadSetting(await runServerProcess({ REPORTS_DATA_DIR: '/proc/nope/deeper' }), 'REPORTS_DATA_DIR');
});

bad(
  'a data directory under a dangling symbolic link, or under a file, exits 2 naming REPORTS_DATA_DIR',
  async ({ dir }) => {
    await symlink(join(dir, 'gone'), join(dir, 'dangling'));
    const result = await runServerProcess({ REPORTS_DATA_DIR: join(dir, 'dangling', 'data') });
    assertBadSetting(result, 'REPORTS_DATA_DIR');
    assert.match(result.stderr, 'dangling is a symbolic link to nothing');
    assertBadSetting(await runServerProcess({ REPORTS_DATA_DIR: join(dir, 'dangling') }), 'REPORTS_DATA_DIR');
    assertBadSetting(await runServerProcess({ REPORTS_DATA_DIR: '/etc/hostname/data' }), 'REPORTS_DATA_DIR');
  },
);

bad(
  "HOST that is no address (999.1.1.1), not one of this machine's, or a name that does not resolve exits 2 naming HOST",
  async ({ dir }) => {
    for (const host of ['999.1.1.1', '192.0.2.1', 'no-such-host.invalid'])
      assertBadSetting(await runServerProcess({ HOST: host, REPORTS_DATA_DIR: dir }), 'HOST');
  },
);

bad(
  'a PORT another process listens on exits 2 naming PORT, before anything is opened in the data directory',
  async ({ dir }) => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = other.address() as { port: number };
      assertBadSetting(await runServerProcess({ PORT: String(port), REPORTS_DATA_DIR: dir }), 'PORT');
      assert.equal(await readdir(dir), [], 'what the start left in the data directory');
    } finally {
      other.close();
    }
  },
);

bad('spaces around a numeric setting exit 2 naming it', async ({ dir }) => {
  assertBadSetting(
    await runServerProcess({ REPORTS_SNAPSHOT_EVERY: ' 5 ', REPORTS_DATA_DIR: dir }),
    'REPORTS_SNAPSHOT_EVERY',
  );
});

bad.run();

/** A start that waits on a broker nobody runs: kafkajs retries for many seconds. */
const stuckStart = (dir: string): Env => ({ KAFKA_BROKERS: '127.0.0.1:9', REPORTS_DATA_DIR: dir });

/**
 * Sends `signal` to `pid` once the start is under way: its first log line (the logger is made just
 * before the start, and kafkajs logs each refused connection), however long the machine takes to get there.
 */
async function signalDuringStart(
  child: ChildProcess,
  pid: () => Promise<number>,
  signal: NodeJS.Signals,
): Promise<void> {
  await new Promise((resolve) => child.stdout?.once('data', resolve));
  process.kill(await pid(), signal);
}

const signals = suite<{ dir: string }>('signals during the start');
signals.before.each(async (context) => {
  context.dir = await tempDir('reports-start-signal-');
});
signals.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

signals('SIGTERM while the start waits on an unreachable broker stops the process, exit 0', async ({ dir }) => {
  let sent: Promise<void> = Promise.resolve();
  const result = await runServerProcess(stuckStart(dir), {
    onStarted: (child) => {
      sent = signalDuringStart(child, () => Promise.resolve(child.pid as number), 'SIGTERM');
    },
  });
  await sent;
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, 'stopping: a signal arrived during the start');
});

/** Runs `program` (after the stop signal's handlers are installed) until it prints `ready`; its exit as a shell sees it (128 + signal). */
async function stoppable(
  program: string,
): Promise<{ child: ChildProcess; exited: Promise<number | null>; seen: (text: string) => Promise<void> }> {
  const script = `import(${JSON.stringify(PROCESS_SIGNALS)}).then(async ({ processStopSignal }) => { processStopSignal().addEventListener('abort', () => console.log('stopping')); ${program}; console.log('ready'); setInterval(() => undefined, 1000); });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? null : 128 + osConstants.signals[signal]))),
  );
  const lines = createInterface({ input: child.stdout });
  const seen = (text: string) => new Promise<void>((resolve) => lines.on('line', (line) => line === text && resolve()));
  const ready = seen('ready');
  await withTimeout(ready, 15_000, 'the process to install its handlers');
  return { child, exited, seen };
}

signals(
  'the first SIGTERM asks for a stop, a second one ends the process at once (143): a stop that hangs is not stuck',
  async () => {
    // A process that takes the stop signal and never stops by itself.
    const { child, exited, seen } = await stoppable('');
    const stopping = seen('stopping');
    child.kill('SIGTERM');
    await withTimeout(stopping, 15_000, 'the stop to be asked for');
    assert.is(child.exitCode, null, 'still running after the first signal');
    child.kill('SIGTERM');
    assert.is(await withTimeout(exited, 15_000, 'the exit'), 143);
  },
);

signals(
  'a second SIGTERM ends the process at once also while one of its threads is blocked on a FIFO nobody writes to',
  async ({ dir }) => {
    // Node's process.exit waits for libuv's threads: it hung here for ever.
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const { child, exited, seen } = await stoppable(
      `const { open } = await import('node:fs/promises'); void open(${JSON.stringify(fifo)}, 'r')`,
    );
    try {
      const stopping = seen('stopping');
      child.kill('SIGTERM');
      await withTimeout(stopping, 15_000, 'the stop to be asked for');
      child.kill('SIGTERM');
      assert.is(await withTimeout(exited, 15_000, 'the exit'), 143);
    } finally {
      // A process stuck as it was before this was fixed is not left behind.
      child.kill('SIGKILL');
    }
  },
);

signals('SIGINT twice ends the process with 130', async () => {
  const { child, exited, seen } = await stoppable('');
  const stopping = seen('stopping');
  child.kill('SIGINT');
  await withTimeout(stopping, 15_000, 'the stop to be asked for');
  child.kill('SIGINT');
  assert.is(await withTimeout(exited, 15_000, 'the exit'), 130);
});

/** Whether this process may make a pid namespace (unshare as root). */
function canUnshare(): boolean {
  try {
    execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The pid (in our namespace) of the process unshare forked: pid 1 of its namespace. */
async function forkedPid(unshare: ChildProcess): Promise<number> {
  for (;;) {
    const children = await readFile(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').catch(() => '');
    const pid = Number.parseInt(children, 10);
    if (!Number.isNaN(pid)) return pid;
    await pause(10);
  }
}

if (canUnshare()) {
  signals(
    'as pid 1 of its namespace (a container without an init), SIGTERM during the start stops the process, exit 0',
    async ({ dir }) => {
      let sent: Promise<void> = Promise.resolve();
      const prefix = ['unshare', '--pid', '--fork', '--mount-proc'];
      const result = await runServerProcess(stuckStart(dir), {
        prefix,
        onStarted: (child) => {
          sent = signalDuringStart(child, () => forkedPid(child), 'SIGTERM');
        },
      });
      await sent;
      assert.is(result.code, 0, result.stderr);
    },
  );
} else if (process.env['CI'] === 'true') {
  throw new Error('cannot unshare a pid namespace in CI: the pid-1 signal test is mandatory; run the tests as root');
} else {
  process.stderr.write('\n!!! cannot unshare a pid namespace (not root?): the pid-1 signal test is NOT RUN. !!!\n\n');
}

signals.run();
