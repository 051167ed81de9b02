// The embedded log writes a batch and its content keys side by side and acknowledges both at once.
// A batch whose keys never reached keys.db (a crash between the two syncs, or keys.db without room
// while events.log had some) was never acknowledged, and the server cuts it: at its next start, or
// once space is freed. `reports events` printed such a batch, and a `--follow` then met the batch
// written in its place at the same bytes and called the log corrupt. It now reads a last batch only
// once keys.db holds its keys.
import { readFile, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HEADER_BYTES, SLOT_BYTES } from '../../src/keys/key-slots.js';
import { reports, startReports, lines } from '../helpers/cli.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { idSource, postReport } from '../http/requests.js';

const test = suite('reports events: a last batch without its keys');
const nextId = idSource();

/** What a line's event is about: its position and the report's id. */
function shown(stdout: string): [string, string | undefined][] {
  return lines(stdout).map((line) => {
    const parsed = JSON.parse(line) as { position: string; event?: { subject?: string } };
    return [parsed.position, parsed.event?.subject];
  });
}

test('is not printed; the batch the server writes in its place is, and the follow goes on', async () => {
  const dataDir = await tempDir();
  const env = { REPORTS_DATA_DIR: dataDir };
  const [a, b, c] = [nextId(), nextId(), nextId()];
  try {
    let server = await startTestServer({}, { dataDir });
    assert.is((await postReport(server, a, 'acknowledged')).status, 200);
    assert.is((await postReport(server, b, 'its key is lost below')).status, 200);
    await server.dispose();
    // What a crash between the two syncs leaves: b's batch in events.log, its key not in keys.db.
    const keysPath = join(dataDir, 'keys.db');
    assert.is((await readFile(keysPath)).length, HEADER_BYTES + 2 * SLOT_BYTES, "a's key, then b's");
    await truncate(keysPath, HEADER_BYTES + SLOT_BYTES);

    const listed = await reports(['events'], { env });
    assert.is(listed.code, 0, listed.stderr);
    assert.equal(shown(listed.stdout), [['0', a]], 'the batch without its key is not listed');

    const follow = startReports(['events', '--follow'], { env });
    try {
      await follow.waitForLines(1, 'the acknowledged create');
      // The start cuts b's batch; c's batch goes at its bytes, with the position b had.
      server = await startTestServer({}, { dataDir });
      try {
        assert.is((await postReport(server, c, 'written in its place')).status, 200);
        await follow.waitForLines(2, 'the create written in its place');
      } finally {
        await server.dispose();
      }
    } finally {
      follow.interrupt();
    }
    const { code, stdout, stderr } = await follow.done;
    assert.is(stderr, '');
    assert.is(code, 0);
    assert.equal(shown(stdout), [
      ['0', a],
      ['1', c],
    ]);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
