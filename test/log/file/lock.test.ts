import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DataDirLockedError } from '../../../src/log/file/lock.js';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { rejection, withTimeout } from '../../helpers/async.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { makeZombie, processStartTime } from '../../helpers/unreaped.js';

const quiet = () => memoryLogger().logger;
const GUARD_MS = 10_000;

// A second process that opens the data directory with the compiled file log and reports on stdout:
// `{"opened":true}` and then holds the lock until stdin closes, or `{"error":..., "ownerPid":...}`.
const CHILD_SCRIPT = `
const { openFileLog } = await import(process.env.FILE_LOG_URL);
const { createLogger } = await import(process.env.LOGGER_URL);
try {
  const log = await openFileLog({ dir: process.env.DATA_DIR, logger: createLogger('silent') });
  console.log(JSON.stringify({ opened: true }));
  process.stdin.resume();
  process.stdin.on('end', async () => { await log.close(); process.exit(0); });
} catch (error) {
  console.log(JSON.stringify({ error: error.name, ownerPid: error.ownerPid }));
  process.exit(3);
}
`;

interface ChildReport {
  readonly opened?: boolean;
  readonly error?: string;
  readonly ownerPid?: number;
}

function spawnOpener(dir: string): { child: ChildProcess; report: Promise<ChildReport> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD_SCRIPT], {
    env: {
      ...process.env,
      FILE_LOG_URL: new URL('../../../src/log/file/file-log.js', import.meta.url).href,
      LOGGER_URL: new URL('../../../src/logger.js', import.meta.url).href,
      DATA_DIR: dir,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const report = new Promise<ChildReport>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as ChildReport));
    child.once('exit', (code) => reject(new Error(`the child exited with ${code} before reporting`)));
  });
  return { child, report: withTimeout(report, GUARD_MS, 'the child process to open the log') };
}

async function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await withTimeout(once(child, 'exit'), GUARD_MS, 'the child process to exit')) as [number | null];
  return code;
}

/** The highest lock generation's content: who holds the directory, or `released`. */
async function holder(dir: string): Promise<{ pid?: number; released?: boolean; startTime?: string; bootId?: string }> {
  const generations = (await readdir(dir)).flatMap((name) => /^LOCK\.(\d+)$/.exec(name)?.[1] ?? []).map(Number);
  return JSON.parse(await readFile(join(dir, `LOCK.${Math.max(...generations)}`), 'utf8')) as { pid?: number };
}

const lock = suite<{ dir: string; children: ChildProcess[] }>('file log lock');
lock.before.each(async (context) => {
  context.dir = await tempDir('reports-lock-');
  context.children = [];
});
lock.after.each(async ({ dir, children }) => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

lock('names the owner by pid, start time and boot id in the lock', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const owner = await holder(dir);
  assert.is(owner.pid, process.pid);
  assert.match(owner.startTime ?? '', /^\d+$/);
  assert.is(owner.bootId, (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim());
  await log.close();
});

lock('refuses a second open of the same directory in this process', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: quiet() });
  const error = await rejection(openFileLog({ dir, logger: quiet() }));
  assert.instance(error, DataDirLockedError);
  assert.is((error as DataDirLockedError).ownerPid, process.pid);
  assert.match((error as Error).message, dir);
  await log.close();
});

lock('releases the lock on close, so the directory opens again', async ({ dir }) => {
  const first = await openFileLog({ dir, logger: quiet() });
  await first.close();
  assert.equal(await holder(dir), { released: true });
  const second = await openFileLog({ dir, logger: quiet() });
  await second.close();
});

lock('refuses another process while this one holds the directory', async (context) => {
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  const { child, report } = spawnOpener(context.dir);
  context.children.push(child);
  assert.equal(await report, { error: 'DataDirLockedError', ownerPid: process.pid });
  assert.is(await exitOf(child), 3);
  await log.close();
});

lock('is refused while another process holds the directory, and opens once it has closed', async (context) => {
  const { child, report } = spawnOpener(context.dir);
  context.children.push(child);
  assert.equal(await report, { opened: true });
  const error = await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
  assert.instance(error, DataDirLockedError);
  assert.is((error as DataDirLockedError).ownerPid, child.pid);
  child.stdin?.end();
  assert.is(await exitOf(child), 0);
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  await log.close();
});

lock('takes over the lock of a process that was killed', async (context) => {
  const { child, report } = spawnOpener(context.dir);
  context.children.push(child);
  assert.equal(await report, { opened: true });
  child.kill('SIGKILL');
  await exitOf(child);
  assert.is((await holder(context.dir)).pid, child.pid, 'the killed process left its lock behind');
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  assert.is((await holder(context.dir)).pid, process.pid);
  await log.close();
});

lock('takes over a lock naming its own pid written by an earlier process (pid reuse)', async ({ dir }) => {
  const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  await writeFile(join(dir, 'LOCK.7'), JSON.stringify({ pid: process.pid, startTime: '1', bootId }));
  const log = await openFileLog({ dir, logger: quiet() });
  assert.is((await holder(dir)).pid, process.pid);
  await log.close();
});

lock('takes over a lock naming a live process that did not write it', async (context) => {
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  context.children.push(other);
  const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  await writeFile(join(context.dir, 'LOCK.3'), JSON.stringify({ pid: other.pid, startTime: '1', bootId }));
  const log = await openFileLog({ dir: context.dir, logger: quiet() });
  assert.is((await holder(context.dir)).pid, process.pid);
  await log.close();
});

lock(
  'takes over a lock whose writer is a zombie (exited, never reaped), though its pid and start time still match',
  async ({ dir }) => {
    const zombie = await makeZombie();
    try {
      const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
      await writeFile(
        join(dir, 'LOCK.5'),
        JSON.stringify({ pid: zombie.pid, startTime: await processStartTime(zombie.pid), bootId }),
      );
      const log = await openFileLog({ dir, logger: quiet() });
      assert.is((await holder(dir)).pid, process.pid);
      await log.close();
    } finally {
      await zombie.reap();
    }
  },
);

lock('still refuses a lock whose writer runs, named by the same pid, start time and boot id', async (context) => {
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  context.children.push(other);
  const pid = other.pid as number;
  const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  await writeFile(join(context.dir, 'LOCK.5'), JSON.stringify({ pid, startTime: await processStartTime(pid), bootId }));
  const error = await rejection(openFileLog({ dir: context.dir, logger: quiet() }));
  assert.instance(error, DataDirLockedError);
  assert.is((error as DataDirLockedError).ownerPid, pid);
});

lock('takes over a lock written before the machine last booted', async ({ dir }) => {
  await writeFile(join(dir, 'LOCK.2'), JSON.stringify({ pid: process.ppid, startTime: '1', bootId: 'another-boot' }));
  const log = await openFileLog({ dir, logger: quiet() });
  assert.is((await holder(dir)).pid, process.pid);
  await log.close();
});

lock('takes over a lock generation whose content is not a lock', async ({ dir }) => {
  await writeFile(join(dir, 'LOCK.9'), 'not json');
  const log = await openFileLog({ dir, logger: quiet() });
  assert.is((await holder(dir)).pid, process.pid);
  assert.equal(
    (await readdir(dir)).filter((name) => name.startsWith('LOCK')),
    ['LOCK.10'],
    'the older generations are removed',
  );
  await log.close();
});

lock.run();
