// `reports events` whose output is read slowly: a full pipe holds the tool's writes back for as long
// as its reader likes, so the tool reaches a create seconds after it read keys.db. A report deleted
// meanwhile (its DELETE answered 204) must print erased, its name in no line: the tool asks again
// for the key of a create it reaches once its read of every key is no longer fresh.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CLI, lines } from '../helpers/cli.js';
import { childEnv } from '../helpers/child-server.js';
import { startTestServer } from '../helpers/server.js';
import { withTimeout } from '../helpers/async.js';
import { deleteReport, distinctive, idSource, postReport } from '../http/requests.js';

const slowReader = suite('reports events: a slow reader');

/**
 * Far more than a pipe (64 KiB) and the reading stream's buffer hold, so the tool waits on its reader
 * long before it reaches the last create, however slowly this machine runs it.
 */
const FILLER_REPORTS = 400;
const FILLER_NAME = 'x'.repeat(1500);

slowReader('prints erased a create whose report was deleted while the tool waited on its reader', async () => {
  const server = await startTestServer();
  try {
    const nextId = idSource();
    for (let i = 0; i < FILLER_REPORTS; i += 1)
      assert.is((await postReport(server, nextId(), `${FILLER_NAME}${i}`)).status, 200);
    const marked = nextId();
    const marker = distinctive('slow-reader-marker');
    assert.is((await postReport(server, marked, marker, 'slow-reader-tag')).status, 200);

    const child = spawn(process.execPath, [CLI, 'events'], {
      env: childEnv({ REPORTS_DATA_DIR: server.dataDir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = once(child, 'close');
    try {
      // Nothing read yet. Its first line says the tool has read the log's head and keys.db (it
      // does both before its first line); once the pipe is full it waits, long before the marked
      // create, and the delete comes after its head (the delete is not printed).
      child.stdout.pause();
      await withTimeout(once(child.stdout, 'readable'), 60_000, 'the first line of reports events');
      await delay(500);
      assert.is((await deleteReport(server, marked)).status, 204);
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.stdout.resume();
      const [code] = (await withTimeout(closed, 60_000, 'reports events to exit')) as [number];
      assert.is(code, 0, stderr);
      const stdout = Buffer.concat(chunks).toString('utf8');
      // Every create; not the delete, written after the head the tool reads up to.
      assert.is(lines(stdout).length, FILLER_REPORTS + 1);
      assert.not.ok(stdout.includes(marker), 'the deleted name in no line');
      assert.not.ok(stdout.includes('slow-reader-tag'), 'nor its tag');
      const markedCreate = lines(stdout)
        .map((line) => JSON.parse(line) as { erased?: true; event: { type: string; subject: string } })
        .find(({ event }) => event.type === 'ReportCreated' && event.subject === marked);
      assert.is(markedCreate?.erased, true);
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    await server.dispose();
    await rm(server.dataDir, { recursive: true, force: true });
  }
});

slowReader.run();
