// The key store's promise under SIGKILL, with puts and destroys in flight: every put that resolved
// is there after a reopen, every destroy that resolved is gone, bytes and all.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { parseKeyId } from '../../src/keys/key-store.js';
import { until, withTimeout } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const CHILD = fileURLToPath(new URL('./key-writer-child.js', import.meta.url));
const GUARD_MS = 15_000;

interface Written {
  readonly secret: Buffer;
  readonly digest: Buffer;
  destroying: boolean;
  destroyed: boolean;
}

const crash = suite<{ dir: string }>('the key store killed with writes in flight');
crash.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-crash-');
});
crash.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the writer on `dir` until it has resolved `puts` puts and `destroys` destroys, then SIGKILLs it. */
async function writeUntilKilled(
  dir: string,
  written: Map<string, Written>,
  puts: number,
  destroys: number,
): Promise<void> {
  const child = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  // 'close', not 'exit': at 'exit' lines the child printed may still wait in the pipe, and a
  // "destroying" line read only after the check made its destroyed key look like a lost put.
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_, signal) => resolve(signal)));
  let put = 0;
  let destroyed = 0;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const [what, id = '', secret = '', digest = ''] = line.split(' ');
    if (what === 'put') {
      written.set(id, {
        secret: Buffer.from(secret, 'hex'),
        digest: Buffer.from(digest, 'hex'),
        destroying: false,
        destroyed: false,
      });
      put += 1;
    }
    const key = written.get(id);
    if (what === 'destroying' && key) key.destroying = true;
    if (what === 'destroyed' && key) {
      key.destroyed = true;
      destroyed += 1;
    }
  });
  try {
    await until(() => put >= puts && destroyed >= destroys, `${puts} puts and ${destroys} destroys`, {
      timeoutMs: GUARD_MS,
    });
  } finally {
    child.kill('SIGKILL');
  }
  assert.is(await withTimeout(exited, GUARD_MS, 'the child to die'), 'SIGKILL');
}

/** What is wrong with the keys in `dir` against what the killed writers were told. */
async function wrongKeys(dir: string, written: ReadonlyMap<string, Written>): Promise<string[]> {
  const raw = await readFile(join(dir, 'keys.db'));
  const store = await openFileKeyStore({ dir, logger: memoryLogger().logger });
  const wrong: string[] = [];
  try {
    for (const [id, key] of written) {
      const found = await store.get(parseKeyId(id));
      if (key.destroyed) {
        if (found !== undefined) wrong.push(`${id}: destroyed, still there`);
        if (raw.includes(key.secret) || raw.includes(key.digest))
          wrong.push(`${id}: destroyed, bytes still in keys.db`);
      } else if (found === undefined) {
        if (!key.destroying) wrong.push(`${id}: put, missing`);
      } else if (!found.secret.equals(key.secret) || !found.contentDigest.equals(key.digest)) {
        wrong.push(`${id}: another key`);
      }
      if (!store.holds(parseKeyId(id))) wrong.push(`${id}: not held`);
    }
    wrong.push(...(await store.verify()).map((slot) => `slot ${slot} damaged`));
  } finally {
    await store.close();
  }
  return wrong;
}

crash('keeps every put that resolved and none of the destroys that did, kill after kill', async ({ dir }) => {
  const written = new Map<string, Written>();
  for (let round = 1; round <= 3; round += 1) {
    await writeUntilKilled(dir, written, 1000 * round, 250 * round);
    const wrong = await wrongKeys(dir, written);
    assert.equal(wrong.slice(0, 10), [], `${wrong.length} keys wrong after kill ${round}`);
  }
});

crash.run();
