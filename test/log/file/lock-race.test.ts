import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { promisify } from 'node:util';
import { withTimeout } from '../../helpers/async.js';
import { tempDir } from '../../helpers/server.js';
import { makeZombie, processStartTime } from '../../helpers/unreaped.js';

const LOCK_URL = new URL('../../../src/log/file/lock.js', import.meta.url).href;
const GUARD_MS = 20_000;

// A racer: on `lock <dir>` tries to lock the directory and answers `held` or `refused`; on
// `release` lets go and answers `released`.
const RACER_SCRIPT = `
const { lockDir } = await import(process.env.LOCK_URL);
let held;
for await (const line of (await import('node:readline')).createInterface({ input: process.stdin })) {
  const [command, dir] = line.split(' ');
  if (command === 'lock') {
    try { held = await lockDir(dir); console.log('held'); } catch (error) { console.log(error.name === 'DataDirLockedError' ? 'refused' : 'error ' + error.message); }
  } else {
    await held?.release(); held = undefined; console.log('released');
  }
}
`;

interface Racer {
  readonly child: ChildProcess;
  readonly lines: Interface;
}

function spawnRacer(): Racer {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RACER_SCRIPT], {
    env: { ...process.env, LOCK_URL },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return { child, lines: createInterface({ input: child.stdout }) };
}

function ask(racer: Racer, command: string): Promise<string> {
  const answer = new Promise<string>((resolve) => racer.lines.once('line', resolve));
  racer.child.stdin!.write(`${command}\n`);
  return withTimeout(answer, GUARD_MS, `a racer to answer ${command}`);
}

const race = suite<{ dir: string }>('file log lock under a race');
race.before.each(async (context) => {
  context.dir = await tempDir('reports-lock-race-');
});
race.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

race('five processes racing for a stale lock: exactly one holds it, in each of 50 trials', async ({ dir }) => {
  const racers = Array.from({ length: 5 }, spawnRacer);
  try {
    const holders: number[] = [];
    for (let trial = 0; trial < 50; trial += 1) {
      const trialDir = join(dir, String(trial));
      await mkdir(trialDir);
      // Stale: a generation naming a dead pid.
      await writeFile(join(trialDir, 'LOCK.4'), JSON.stringify({ pid: 999_999_999, startTime: '1' }));
      const answers = await Promise.all(racers.map((racer) => ask(racer, `lock ${trialDir}`)));
      assert.ok(
        answers.every((answer) => answer === 'held' || answer === 'refused'),
        answers.join(','),
      );
      holders.push(answers.filter((answer) => answer === 'held').length);
      await Promise.all(racers.map((racer) => ask(racer, 'release')));
    }
    assert.equal(holders, Array(50).fill(1));
  } finally {
    for (const { child } of racers) child.kill('SIGKILL');
  }
});

race(
  'five processes racing for the lock of a zombie (exited, never reaped): exactly one holds it, in each of 20 trials',
  async ({ dir }) => {
    const zombie = await makeZombie();
    const racers = Array.from({ length: 5 }, spawnRacer);
    try {
      const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
      const lockOfZombie = JSON.stringify({ pid: zombie.pid, startTime: await processStartTime(zombie.pid), bootId });
      const holders: number[] = [];
      for (let trial = 0; trial < 20; trial += 1) {
        const trialDir = join(dir, String(trial));
        await mkdir(trialDir);
        await writeFile(join(trialDir, 'LOCK.2'), lockOfZombie);
        const answers = await Promise.all(racers.map((racer) => ask(racer, `lock ${trialDir}`)));
        assert.ok(
          answers.every((answer) => answer === 'held' || answer === 'refused'),
          answers.join(','),
        );
        holders.push(answers.filter((answer) => answer === 'held').length);
        await Promise.all(racers.map((racer) => ask(racer, 'release')));
      }
      assert.equal(holders, Array(20).fill(1));
    } finally {
      for (const { child } of racers) child.kill('SIGKILL');
      await zombie.reap();
    }
  },
);

race('a stale lock naming pid 1 does not block the only process of a container (pid 1 itself)', async ({ dir }) => {
  await writeFile(join(dir, 'LOCK.1'), JSON.stringify({ pid: 1 }));
  // unshare -fp: a new pid namespace, where this node process is pid 1 (as in a container).
  const script = `const { lockDir } = await import(${JSON.stringify(LOCK_URL)}); await lockDir(${JSON.stringify(dir)}); console.log('held by pid', process.pid);`;
  const { stdout } = await promisify(execFile)(
    'unshare',
    ['-fp', '--mount-proc', process.execPath, '--input-type=module', '-e', script],
    { timeout: GUARD_MS },
  );
  assert.is(stdout.trim(), 'held by pid 1');
});

race.run();
