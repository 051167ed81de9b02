// keys.db of another store copied over this one's (an operator's slip, a wrong file restored by
// hand): its slots hold keys under the same numbers, so the start's check that the key store holds
// the log's newest key passes. A few live reports' keys that the file holds must open their
// content, or the start stops with one line naming the file before the server is ready: no write
// is taken and the sweep destroys no key of it. A live report whose key is missing is passed over.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startReports } from '../helpers/cli.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { appendSealedToFileLog } from '../helpers/sealed-history.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { keyIdOfSlot } from '../../src/keys/key-slots.js';

const foreign = suite<{ mine: string; theirs: string }>('keys.db of another store at start');

foreign.before.each(async (context) => {
  context.mine = await tempDir('reports-foreign-keys-mine-');
  context.theirs = await tempDir('reports-foreign-keys-theirs-');
});
foreign.after.each(async ({ mine, theirs }) => {
  await rm(mine, { recursive: true, force: true });
  await rm(theirs, { recursive: true, force: true });
});

/** `reports serve` on `dir` to its exit; one still serving after 15 s is stopped, and its exit code reads 'still serving'. */
async function serve(dir: string): Promise<{ code: number | 'still serving'; stderr: string }> {
  const running = startReports(['serve'], { env: { REPORTS_DATA_DIR: dir, PORT: '0' } });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 15_000)));
  const first = await Promise.race([running.done, late]);
  clearTimeout(timer);
  if (first !== 'late') return first;
  running.interrupt();
  return { code: 'still serving', stderr: (await running.done).stderr };
}

foreign('stops the start with one line naming keys.db, and destroys none of its keys', async ({ mine, theirs }) => {
  // Three keys each: the other store's keys.db holds every slot this log refers to.
  await appendSealedToFileLog(mine, [created('1', 'Review of J. Smith'), created('2', 'b'), created('3', 'c')]);
  await appendSealedToFileLog(theirs, [created('7', 'x'), created('8', 'y'), created('9', 'z'), created('10', 'w')]);
  await copyFile(join(theirs, 'keys.db'), join(mine, 'keys.db'));
  const keysBefore = await readFile(join(mine, 'keys.db'));
  const { code, stderr } = await serve(mine);
  assert.is(code, 1);
  assert.match(stderr, `${join(mine, 'keys.db')} holds key `);
  assert.match(
    stderr,
    "does not open the report's content: " + join(mine, 'keys.db') + ' and the event log beside it are not one store',
  );
  assert.not.match(stderr, 'Review of J. Smith');
  assert.equal(await readFile(join(mine, 'keys.db')), keysBefore, 'no key of the file destroyed');
});

/** Destroys the keys of `slots` in `dir`'s keys.db, as deletes (or another store's) would have. */
async function destroySlots(dir: string, slots: readonly number[]): Promise<void> {
  const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger });
  try {
    await keys.destroy(slots.map(keyIdOfSlot));
  } finally {
    await keys.close();
  }
}

foreign(
  "stops the start when the keys the file holds come after slots it destroyed (the other store's deletes)",
  async ({ mine, theirs }) => {
    const ids = Array.from({ length: 12 }, (_, i) => String(i + 1));
    await appendSealedToFileLog(
      mine,
      ids.map((id) => created(id, `mine ${id}`)),
    );
    await appendSealedToFileLog(
      theirs,
      ids.map((id) => created(String(100 + Number(id)), 'theirs')),
    );
    // The other store deleted its first eleven reports: only the slot of this store's last key is live there.
    await destroySlots(
      theirs,
      ids.slice(0, 11).map((_, slot) => slot),
    );
    await copyFile(join(theirs, 'keys.db'), join(mine, 'keys.db'));
    const keysBefore = await readFile(join(mine, 'keys.db'));
    const { code, stderr } = await serve(mine);
    assert.is(code, 1);
    assert.match(stderr, `holds key AAAAAAAL of report 12, but that key does not open the report's content`);
    assert.equal(await readFile(join(mine, 'keys.db')), keysBefore, 'no key of the file destroyed');
  },
);

foreign('starts on its own keys.db, passing over a live report whose key is missing', async ({ mine }) => {
  await appendSealedToFileLog(mine, [created('1', 'a'), created('2', 'b'), created('3', 'c')]);
  await destroySlots(mine, [1]);
  const server = await startTestServer({}, { dataDir: mine });
  try {
    assert.is((await server.request('/reports/2')).status, 500);
    assert.is((await server.request('/reports/3')).status, 200);
  } finally {
    await server.dispose();
  }
});

foreign('starts on its own keys.db with a report created again after its delete', async ({ mine }) => {
  // The report created again is sealed with its expectedversion in the associated data: the check opens it so.
  await appendSealedToFileLog(mine, [
    created('1', 'a'),
    created('2', 'b'),
    deleted('1'),
    basedOn(created('1', 'again'), 2),
  ]);
  const server = await startTestServer({}, { dataDir: mine });
  try {
    // The sweep (after the check) has run when a delete of an absent report answers.
    assert.is((await server.request('/reports/99', { method: 'DELETE' })).status, 404);
    const read = await server.request('/reports/1');
    assert.is(read.status, 200);
    assert.is(((await read.json()) as { name: string }).name, 'again');
    assert.not.match(
      server
        .logLines()
        .map((line) => JSON.stringify(line))
        .join('\n'),
      'another store',
    );
  } finally {
    await server.dispose();
  }
});

foreign.run();
