// A server killed (SIGKILL) while it writes a snapshot leaves the snapshot's temporary file; the
// next start removes it, and no later start or stop leaves one.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotDir } from '../../src/snapshot/snapshot-store.js';
import { withTimeout } from '../helpers/async.js';
import { startChildServer } from '../helpers/child-server.js';
import { created } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { tempDir, TEST_TOKEN } from '../helpers/server.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const TEMPORARY = /^snapshot-\d{16}\.snap\.\d+\.tmp$/;
const temporaries = async (dir: string) => (await readdir(snapshotDir(dir))).filter((name) => TEMPORARY.test(name));

/**
 * Starts the server on `dataDir` and SIGKILLs it the moment a temporary snapshot file appears (its
 * catch-up snapshot of a 32 MiB model takes far longer to write than the kill takes to land).
 */
async function killDuringSnapshot(dataDir: string): Promise<void> {
  await mkdir(snapshotDir(dataDir), { recursive: true, mode: 0o700 });
  // Not a Kafka suite's KAFKA_BROKERS (with-kafka.sh sets it for the whole run): on Kafka the server
  // writes no file-log snapshot, and the wait below timed out under make test.
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('KAFKA_'));
  const env = {
    ...Object.fromEntries(inherited),
    PORT: '0',
    LOG_LEVEL: 'warn',
    REPORTS_TOKENS: TEST_TOKEN,
    REPORTS_DATA_DIR: dataDir,
    REPORTS_SNAPSHOT_EVERY: '1',
  };
  const child = spawn(process.execPath, [MAIN], { env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const watcher = watch(snapshotDir(dataDir));
  try {
    await withTimeout(
      new Promise<void>((resolve) => {
        watcher.on('change', (_event, name) => {
          if (typeof name === 'string' && TEMPORARY.test(name)) resolve(void child.kill('SIGKILL'));
        });
      }),
      60_000,
      'a temporary snapshot file',
    );
  } finally {
    watcher.close();
    child.kill('SIGKILL');
    await exited;
  }
}

const killed = suite<{ dir: string }>('a snapshot killed while it is written');
killed.before.each(async (context) => {
  context.dir = await tempDir('reports-killed-snapshot-');
});
killed.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

killed('leaves a temporary file that the next start removes; clean starts and stops leave none', async ({ dir }) => {
  const name = 'n'.repeat(1024 * 1024);
  for (let batch = 0; batch < 4; batch += 1)
    await appendToFileLog(
      dir,
      Array.from({ length: 8 }, (_, i) => created(String(batch * 8 + i), name)),
    );
  await killDuringSnapshot(dir);
  assert.is((await temporaries(dir)).length, 1, 'the killed snapshot left its temporary file');
  for (let start = 0; start < 2; start += 1) {
    const server = await startChildServer({ REPORTS_DATA_DIR: dir, REPORTS_SNAPSHOT_EVERY: '0' });
    await server.waitReady(60_000);
    if (start === 0)
      await server.waitForLine(
        (line) => line['msg'] === 'removed temporary snapshot files left by a writer that stopped',
        'the removal',
      );
    server.kill('SIGTERM');
    assert.is((await server.waitExit()).code, 0);
    assert.equal(await temporaries(dir), [], `after start ${start + 1}`);
  }
});

killed.run();
