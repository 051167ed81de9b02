// `reports seal-history` killed at random points (SIGKILL, in a child process): the data directory
// it leaves always opens, with the digest it had before; run again to its end, the history is
// sealed, the digest still the same, and no file holds a deleted report's name.
import { spawn } from 'node:child_process';
import { cp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeHistory } from '../bench/history.js';
import { reports } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { random } from '../helpers/random.js';
import { startTestServer, tempDir } from '../helpers/server.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const KILLS = 12;

/** Runs `reports seal-history` in a child process, SIGKILLed after `killAfterMs` unless it ended; how long it ran and whether it was killed. */
async function sealHistoryChild(
  dataDir: string,
  killAfterMs = Number.POSITIVE_INFINITY,
): Promise<{ ms: number; killed: boolean; code: number | null }> {
  // The file log's command: nothing of a Kafka suite's environment (KAFKA_BROKERS) may reach it.
  const { KAFKA_BROKERS: _kafka, ...env } = process.env;
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'seal-history'], {
    env: { ...env, REPORTS_DATA_DIR: dataDir },
    stdio: 'ignore',
  });
  const timer = Number.isFinite(killAfterMs) ? setTimeout(() => child.kill('SIGKILL'), killAfterMs) : undefined;
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (...outcome) => resolve(outcome)),
  );
  clearTimeout(timer);
  return { ms: performance.now() - started, killed: signal === 'SIGKILL', code };
}

async function digestOfServer(dataDir: string): Promise<string> {
  const server = await startTestServer({}, { dataDir });
  try {
    return await serverDigest(server);
  } finally {
    await server.close();
  }
}

/** Files under `dir` holding the name of a report of the history that was deleted (even k). */
async function deletedNamesIn(dir: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!(await stat(path)).isFile()) continue;
    const names = (await readFile(path)).toString('latin1').match(/Quarterly report \d{6}[02468]/g) ?? [];
    if (names.length > 0) hits.push(`${path}: ${names[0]}`);
  }
  return hits;
}

const killed = suite<{ dir: string }>('reports seal-history killed at random points');
killed.before.each(async (context) => {
  context.dir = await tempDir('reports-seal-killed-');
});
killed.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

killed(
  'leaves a store that opens with the digest it had, and sealed with that digest once run to its end',
  async ({ dir }) => {
    const pristine = join(dir, 'pristine');
    await writeHistory(pristine, { firstId: 1000n, reports: 8000, deleteEven: true, plain: true });
    const before = await digestOfServer(pristine);
    // How long a whole run takes here, on a copy: the kills fall anywhere in it, or just after.
    const dataDir = join(dir, 'data');
    await cp(pristine, dataDir, { recursive: true });
    const whole = await sealHistoryChild(dataDir);
    assert.is(whole.code, 0);
    const seed = Date.now();
    const next = random(seed);
    let interrupted = 0;
    for (let kill = 0; kill < KILLS; kill += 1) {
      // Each run from the history in the clear (the last one's leftovers are the next check's).
      await rm(dataDir, { recursive: true, force: true });
      await cp(pristine, dataDir, { recursive: true });
      const at = Math.floor(next() * whole.ms * 1.1);
      const run = await sealHistoryChild(dataDir, at);
      if (run.killed) interrupted += 1;
      assert.is(
        await digestOfServer(dataDir),
        before,
        `after a kill at ${at} ms of ${Math.round(whole.ms)} (seed ${seed})`,
      );
      assert.not.ok(
        (await readdir(dataDir)).some((name) => name.endsWith('.staging')),
        `the start removed what the killed run staged (seed ${seed})`,
      );
    }
    assert.ok(interrupted > 0, `at least one run was killed (seed ${seed})`);
    const { code, stdout, stderr } = await reports(['seal-history'], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(code, 0, stderr);
    assert.match(stdout, `state digest:    ${before}`);
    assert.is(await digestOfServer(dataDir), before);
    assert.equal(await deletedNamesIn(dataDir), [], `no deleted report's name in any file (seed ${seed})`);
  },
);

killed.run();
