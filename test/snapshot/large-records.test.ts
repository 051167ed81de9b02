// The largest reports the configuration admits (1,048,576 characters of name and of tag, an 8 MiB
// body, emoji included) survive a snapshot and a restart unchanged: an identical create still answers 200, and a
// snapshot's digest is the digest of a full replay.
import { readdir, rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotDir } from '../../src/snapshot/snapshot-store.js';
import { reports, replaySummary } from '../helpers/cli.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { reportBody } from '../http/requests.js';

const MAX_CHARS = 1024 * 1024;
const BODY_LIMIT = 8 * 1024 * 1024;
const limits = {
  REPORTS_NAME_MAX_CHARS: String(MAX_CHARS),
  REPORTS_TAG_MAX_CHARS: String(MAX_CHARS),
  REPORTS_BODY_LIMIT: '8mb',
};

/** The report: two bytes a character in the read model, twice the table's 4 MiB chunk together. */
const widest = reportBody('1', 'Ā'.repeat(MAX_CHARS), 'Ā'.repeat(MAX_CHARS));

/**
 * The largest body: both strings at their limit, the name three UTF-8 bytes a character, the tag
 * partly escaped control characters (six bytes each), padded with JSON whitespace to exactly the limit.
 */
function largestBody(): string {
  const name = '€'.repeat(MAX_CHARS);
  const frame = reportBody('2', name, '').length + 2 * MAX_CHARS; // '€' is one UTF-16 unit but three bytes
  const escaped = Math.floor((BODY_LIMIT - frame - 3 * MAX_CHARS) / 3);
  const body = reportBody('2', name, '\u0001'.repeat(escaped) + '€'.repeat(MAX_CHARS - escaped));
  return body.slice(0, -1) + ' '.repeat(BODY_LIMIT - Buffer.byteLength(body)) + '}';
}

/**
 * The most bytes a report can take in the read model: characters are counted as code points, so an
 * emoji (four bytes of UTF-8, two UTF-16 units, four bytes in the table) is one. The name at its
 * limit in emoji, the tag in emoji up to exactly the body limit: about 8 MiB in the table.
 */
function emojiBody(): string {
  const name = '😀'.repeat(MAX_CHARS);
  const frame = Buffer.byteLength(reportBody('3', name, ''));
  const body = reportBody('3', name, '😀'.repeat(Math.floor((BODY_LIMIT - frame) / 4)));
  return body.slice(0, -1) + ' '.repeat(BODY_LIMIT - Buffer.byteLength(body)) + '}';
}

async function snapshotCount(dir: string): Promise<number> {
  return (await readdir(snapshotDir(dir)).catch(() => [] as string[])).filter((name) => name.endsWith('.snap')).length;
}

const large = suite<{ dir: string }>('the largest admitted reports across snapshots');
large.before.each(async (context) => {
  context.dir = await tempDir('reports-large-');
});
large.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

large(
  "round-trip through the server's own snapshot, reports snapshot and a restart: identical creates answer 200",
  async ({ dir }) => {
    const biggest = largestBody();
    const emoji = emojiBody();
    assert.is(Buffer.byteLength(biggest), BODY_LIMIT);
    assert.is(Buffer.byteLength(emoji), BODY_LIMIT);
    let server = await startTestServer({ ...limits, REPORTS_SNAPSHOT_EVERY: '1' }, { dataDir: dir });
    const answers: string[] = [];
    try {
      for (const body of [widest, biggest, emoji]) {
        const response = await server.request('/reports', { method: 'POST', json: body });
        assert.is(response.status, 200);
        answers.push(await response.text());
      }
      assert.is(
        (await server.request('/reports', { method: 'POST', json: `${biggest} ` })).status,
        413,
        'one byte more is refused',
      );
    } finally {
      await server.close();
    }
    assert.ok((await snapshotCount(dir)) > 0, 'the server wrote a snapshot');
    const env = { ...limits, REPORTS_DATA_DIR: dir };
    const snapshot = await reports(['snapshot'], { env });
    assert.is(snapshot.code, 0, snapshot.stderr);
    const { digest } = await replaySummary(env);
    assert.match(snapshot.stdout, `state digest:    sha256:${digest}`);
    server = await startTestServer(limits, { dataDir: dir });
    try {
      assert.ok(
        server.logLines().some((line) => line['msg'] === 'loaded a snapshot; folding only the tail of the log'),
        'started from the snapshot',
      );
      for (const [i, body] of [widest, biggest, emoji].entries()) {
        const response = await server.request('/reports', { method: 'POST', json: body });
        assert.is(response.status, 200, `identical create ${i + 1} after the restart`);
        assert.is(await response.text(), answers[i]);
      }
    } finally {
      await server.close();
    }
  },
);

large.run();
