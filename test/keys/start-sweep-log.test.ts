// A start's sweep of keys.db says at info how many keys it destroyed: an operator who put an older
// events.log back by hand reads there that the newer reports' keys went; a sweep that finds
// nothing stays quiet.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { created } from '../helpers/events.js';
import { appendSealedToFileLog } from '../helpers/sealed-history.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';

const sweepLog = suite<{ dir: string }>("a start's sweep of keys.db in the server's output");

sweepLog.before.each(async (context) => {
  context.dir = await tempDir('reports-sweep-log-');
});
sweepLog.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

/** The sweep's lines once it ran: a delete of an absent report waits for it. */
async function sweepLines(dir: string): Promise<Record<string, unknown>[]> {
  const server = await startTestServer({}, { dataDir: dir });
  try {
    assert.is((await server.request('/reports/99', { method: 'DELETE' })).status, 404);
    return server.logLines().filter((line) => typeof line['swept'] === 'number');
  } finally {
    await server.dispose();
  }
}

sweepLog('says at info how many keys no live report uses it destroyed', async ({ dir }) => {
  await appendSealedToFileLog(dir, [created('1', 'a'), created('2', 'b')]);
  // Two keys whose creates never reached the log (as a crash leaves them, or a log older than keys.db).
  const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: false });
  const digest = createHash('sha256').update('x').digest();
  await keys.put([keys.mint(digest), keys.mint(digest)]);
  await keys.close();
  const [line, ...more] = await sweepLines(dir);
  assert.is(more.length, 0);
  assert.is(line?.['swept'], 2);
  assert.is(line?.['level'], 30);
  assert.match(String(line?.['msg']), 'destroyed the keys no live report of the log uses');
});

sweepLog('says nothing above debug when it destroyed nothing', async ({ dir }) => {
  await appendSealedToFileLog(dir, [created('1', 'a')]);
  const lines = await sweepLines(dir);
  assert.ok(lines.every((line) => (line['level'] as number) < 30));
});

sweepLog.run();
