// `reports events --follow` on the file log when `reports restore` puts another log in its place: it
// went on reading the file it had opened (now events.log.before-restore-<time>, which nothing writes
// to), printing nothing of what the restored server wrote, for ever and without a word. It now
// prints what the old file holds, then stops (exit 1) naming the replacement; after a
// `reports seal-history` as well.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '../helpers/async.js';
import { reports, startReports, lines } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { idSource, postReport } from '../http/requests.js';

const test = suite('reports events --follow: file log replaced');
const nextId = idSource();

/** What a line's event is about: its position and the report's id. */
function shown(stdout: string): [string, string | undefined][] {
  return lines(stdout).map((line) => {
    const parsed = JSON.parse(line) as { position: string; event?: { subject?: string } };
    return [parsed.position, parsed.event?.subject];
  });
}

test('prints every event of the log it read, then stops naming the restore; never goes silent', async () => {
  const dir = await tempDir();
  const dataDir = join(dir, 'data');
  const env = { REPORTS_DATA_DIR: dataDir };
  const [a, b, c] = [nextId(), nextId(), nextId()];
  try {
    let server = await startTestServer({}, { dataDir });
    assert.is((await postReport(server, a, 'before the backup')).status, 200);
    const backup = await reports(['backup', join(dir, 'backup')], { env });
    assert.is(backup.code, 0, backup.stderr);
    const follow = startReports(['events', '--follow'], { env });
    await follow.waitForLines(1, 'the event already in the log');
    // Written just before the server stops: the follow may not have read it when the log is replaced.
    assert.is((await postReport(server, b, 'after the backup')).status, 200);
    await server.dispose();
    const stillRunning = await Promise.race([follow.done.then(() => false), pause(600).then(() => true)]);
    assert.ok(stillRunning, 'a follow goes on while the log is only idle');

    const restored = await reports(['restore', join(dir, 'backup')], { env });
    assert.is(restored.code, 0, restored.stderr);
    server = await startTestServer({}, { dataDir });
    try {
      assert.is((await postReport(server, c, 'after the restore')).status, 200);
      const { code, stdout, stderr } = await withTimeout(follow.done, 10_000, 'the follow to stop');
      assert.is(code, 1);
      assert.equal(shown(stdout), [
        ['0', a],
        ['1', b],
      ]);
      assert.match(
        stderr,
        /events\.log was replaced while this followed it \(reports restore or reports seal-history\)/,
      );
      assert.match(stderr, /run this again/);
      // Run again, it reads the restored log: the backup's event, then the one written since.
      const again = await reports(['events'], { env });
      assert.equal(shown(again.stdout), [
        ['0', a],
        ['1', c],
      ]);
    } finally {
      await server.dispose();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('stops too when reports seal-history rewrote the log, after the events it had not printed yet', async () => {
  const dataDir = await tempDir();
  const env = { REPORTS_DATA_DIR: dataDir };
  try {
    // A history written before erasure: its content in the clear, which seal-history seals.
    await appendToFileLog(dataDir, [created('1', 'one'), created('2', 'two')]);
    const follow = startReports(['events', '--follow'], { env });
    await follow.waitForLines(2, 'the two creates');
    await appendToFileLog(dataDir, [deleted('1')]);
    const sealed = await reports(['seal-history'], { env });
    assert.is(sealed.code, 0, sealed.stderr);
    const { code, stdout, stderr } = await withTimeout(follow.done, 10_000, 'the follow to stop');
    assert.is(code, 1);
    assert.equal(shown(stdout), [
      ['0', '1'],
      ['1', '2'],
      ['2', '1'],
    ]);
    assert.match(stderr, /was replaced while this followed it/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

test.run();
