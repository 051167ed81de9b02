// keys.db of another store copied over this one's (an operator's slip, a wrong file restored by
// hand): its slots hold keys under the same numbers, so the start's check that the key store holds
// the log's newest key passes. A few live reports' keys must open their content, or the start stops
// with one line naming the file, before the sweep destroys a key of it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startReports } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import { appendSealedToFileLog } from '../helpers/sealed-history.js';
import { startTestServer, tempDir } from '../helpers/server.js';

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
  assert.match(stderr, "does not open the report's content: the file is another store's");
  assert.not.match(stderr, 'Review of J. Smith');
  assert.equal(await readFile(join(mine, 'keys.db')), keysBefore, 'no key of the file destroyed');
});

foreign('starts on its own keys.db with deleted reports among the live ones', async ({ mine }) => {
  // A deleted report's key is destroyed: the check passes over it to the live ones.
  await appendSealedToFileLog(mine, [created('1', 'a'), created('2', 'b'), deleted('1'), created('3', 'c')]);
  const server = await startTestServer({}, { dataDir: mine });
  try {
    // The sweep (after the check) has run when a delete of an absent report answers.
    assert.is((await server.request('/reports/99', { method: 'DELETE' })).status, 404);
    const read = await server.request('/reports/3');
    assert.is(read.status, 200);
    assert.is(((await read.json()) as { name: string }).name, 'c');
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
