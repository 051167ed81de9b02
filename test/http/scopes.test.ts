// Named tokens and their scopes over HTTP: a token outside its scopes is answered 403 after the
// token check (401) and before anything else, its body unread; the name, never the token, goes into
// the access log line and, as the CloudEvents authcontext, into the event the request writes, which
// `reports events` prints: who deleted report 42, and when.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports } from '../helpers/cli.js';
import { errorAnswer, openSocket } from '../helpers/raw-http.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { withTimeout } from '../helpers/async.js';

const ADMIN = 'admin-token-0123456789abcdef';
const READER = 'reader-token-0123456789abcdef';
const WRITER = 'writer-token-0123456789abcdef';
const TOKENS = `# the three kinds\n${ADMIN}\nreader read ${READER}\ncleanup-job write ${WRITER}\n`;

const scopes = suite<{ server: TestServer }>('scopes');

scopes.before(async (context) => {
  const dir = await tempDir('reports-scopes-');
  const file = join(dir, 'tokens');
  await writeFile(file, TOKENS, { mode: 0o600 });
  context.server = await startTestServer({ REPORTS_TOKENS: '', REPORTS_TOKENS_FILE: file }, { dataDir: dir });
});
scopes.after(async ({ server }) => {
  await server.dispose();
  await rm(server.dataDir, { recursive: true, force: true });
});

const SCOPE_READ = 'Bearer realm="reports", error="insufficient_scope", scope="read"';
const post = (server: TestServer, json: unknown, token: string | null, headers: Record<string, string> = {}) =>
  server.request('/reports', { method: 'POST', json, token, headers });
/** `reports events` output's events (one JSON line each). */
const eventsOf = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { event: Record<string, unknown> }).event);

const requestLines = (server: TestServer) => server.logLines().filter((line) => line['msg'] === 'request');

scopes(
  'answers a read-only token 403 on POST and DELETE, with the Error body and an insufficient_scope challenge, and writes nothing',
  async ({ server }) => {
    const refused = await post(server, { id: 4200, name: 'not yours' }, READER);
    assert.is(refused.status, 403);
    assert.is(
      refused.headers.get('www-authenticate'),
      'Bearer realm="reports", error="insufficient_scope", scope="write"',
    );
    assert.equal(await refused.json(), {
      error: 403,
      message: 'the token "reader" does not have the scope write, which this request needs (it has read)',
    });
    assert.is((await post(server, { id: 4201, name: 'mine' }, ADMIN)).status, 200);
    const del = await server.request('/reports/4201', { method: 'DELETE', token: READER });
    assert.is(del.status, 403);
    assert.equal(((await del.json()) as { error: number }).error, 403);
    // Neither 403 wrote anything: 4200 was never created, 4201 still exists.
    assert.is((await server.request('/reports/4200', { method: 'DELETE', token: ADMIN })).status, 404);
    assert.is((await server.request('/reports/4201', { method: 'DELETE', token: ADMIN })).status, 204);
  },
);

scopes('checks the token first: no token or an unknown one is 401, never 403', async ({ server }) => {
  assert.is((await post(server, { id: 1, name: 'x' }, null)).status, 401);
  assert.is(
    (await server.request('/reports/1', { method: 'DELETE', token: 'not-a-configured-token-0123' })).status,
    401,
  );
});

scopes('answers 403 before the content type, the size or the JSON is looked at', async ({ server }) => {
  const headers = { 'Content-Type': 'text/plain' };
  assert.is(
    (await server.request('/reports', { method: 'POST', body: 'not json', headers, token: READER })).status,
    403,
  );
  assert.is(
    (await server.request('/reports', { method: 'POST', json: 'x'.repeat(200_000), token: READER })).status,
    403,
  );
  assert.is((await server.request('/reports', { method: 'POST', json: '{', token: READER })).status, 403);
  assert.is(
    (await server.request('/reports', { method: 'POST', json: '{', token: WRITER })).status,
    400,
    'the same request with the scope is read',
  );
});

scopes(
  'answers 403 to a huge POST without waiting for its body: the answer comes with none of it sent',
  async ({ server }) => {
    const socket = await openSocket(server.url);
    try {
      const chunks: Buffer[] = [];
      const answered = new Promise<string>((resolve) => {
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          const text = Buffer.concat(chunks).toString('utf8');
          if (/\r\n\r\n\{.*\}$/s.test(text)) resolve(text);
        });
      });
      // 1 GB announced and not one byte of it sent: a server that read the body first would wait (or answer 413).
      socket.write(
        `POST /reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${READER}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`,
      );
      const { status, body } = errorAnswer(
        await withTimeout(answered, 5000, 'the answer to a POST whose body was never sent'),
      );
      assert.is(status, 403);
      assert.is(body.error, 403);
    } finally {
      socket.destroy();
    }
  },
);

scopes(
  'answers a write-only token 403 on GET and HEAD of a report, with the Error body and an insufficient_scope challenge, before the id, the preconditions or the store are looked at',
  async ({ server }) => {
    assert.is((await post(server, { id: 4500, name: 'kept', tag: 'secret' }, WRITER)).status, 200);
    const get = await server.request('/reports/4500', { token: WRITER });
    assert.is(get.status, 403);
    assert.is(get.headers.get('www-authenticate'), SCOPE_READ);
    assert.is(get.headers.get('etag'), null, 'a 403 says nothing of the report, not even its version');
    assert.equal(await get.json(), {
      error: 403,
      message: 'the token "cleanup-job" does not have the scope read, which this request needs (it has write)',
    });
    const head = await server.request('/reports/4500', { method: 'HEAD', token: WRITER });
    assert.is(head.status, 403);
    assert.is(head.headers.get('www-authenticate'), SCOPE_READ);
    assert.is(await head.text(), '');
    // What would be 400 (a bad id, a malformed If-None-Match), 404 (no such report) or 304 to a token that may read.
    assert.is((await server.request('/reports/abc', { token: WRITER })).status, 403);
    assert.is(
      (await server.request('/reports/4500', { token: WRITER, headers: { 'If-None-Match': 'not-an-etag' } })).status,
      403,
    );
    assert.is((await server.request('/reports/4501', { token: WRITER })).status, 403);
    assert.is(
      (await server.request('/reports/4500', { token: WRITER, headers: { 'If-None-Match': '"1"' } })).status,
      403,
    );
    assert.is((await server.request('/reports/abc', { token: ADMIN })).status, 400, 'the same requests with the scope');
    assert.is((await server.request('/reports/4501', { token: ADMIN })).status, 404);
    assert.is((await server.request('/reports/4500', { token: null })).status, 401, 'no token: 401, never 403');
  },
);

scopes(
  'lets a read-only token read a report (200 with its body and ETag, 304 on its version) and answers it 403 on POST and DELETE of that report',
  async ({ server }) => {
    assert.is((await post(server, { id: 4600, name: 'readable', tag: 'r' }, ADMIN)).status, 200);
    const get = await server.request('/reports/4600', { token: READER });
    assert.is(get.status, 200);
    assert.is(get.headers.get('etag'), '"1"');
    assert.equal(await get.json(), { name: 'readable', tag: 'r' });
    assert.is((await server.request('/reports/4600', { method: 'HEAD', token: READER })).status, 200);
    assert.is(
      (await server.request('/reports/4600', { token: READER, headers: { 'If-None-Match': '"1"' } })).status,
      304,
    );
    assert.is(
      (await server.request('/reports/4600', { method: 'DELETE', token: READER, headers: { 'If-Match': '"1"' } }))
        .status,
      403,
    );
    assert.is((await post(server, { id: 4600, name: 'readable', tag: 'r' }, READER)).status, 403);
    const after = await server.request('/reports/4600', { token: READER });
    assert.is(after.status, 200, 'the 403s wrote nothing');
    assert.is(after.headers.get('etag'), '"1"');
  },
);

scopes(
  'answers a write-only token 403 on the feed, before a feed is opened, and lets a read-only token follow it',
  async ({ server }) => {
    const refused = await server.request('/events', { token: WRITER });
    assert.is(refused.status, 403);
    assert.is(refused.headers.get('www-authenticate'), SCOPE_READ);
    assert.equal(await refused.json(), {
      error: 403,
      message: 'the token "cleanup-job" does not have the scope read, which this request needs (it has write)',
    });
    assert.is(
      (await server.request('/events?after=not-a-position', { token: WRITER })).status,
      403,
      'the scope before the position',
    );
    const followed = await server.request('/events', { method: 'HEAD', token: READER });
    assert.is(followed.status, 200);
    assert.match(followed.headers.get('content-type') ?? '', /^application\/x-ndjson/);
  },
);

scopes('lets a write-only token create and delete', async ({ server }) => {
  assert.is((await post(server, { id: 4300, name: 'job' }, WRITER)).status, 200);
  assert.is((await server.request('/reports/4300', { method: 'DELETE', token: WRITER })).status, 204);
});

scopes(
  "puts the token's name in the access log line, none for an unnamed token, and never a token",
  async ({ server }) => {
    const before = requestLines(server).length;
    await (await server.request('/reports/4400', { method: 'DELETE', token: WRITER })).arrayBuffer();
    await (await post(server, { id: 4400, name: 'x' }, READER)).arrayBuffer();
    await (await server.request('/reports/4400', { method: 'DELETE', token: ADMIN })).arrayBuffer();
    await (
      await server.request('/reports/4400', { method: 'DELETE', token: 'unknown-token-0123456789' })
    ).arrayBuffer();
    const lines = requestLines(server).slice(before);
    assert.equal(
      lines.map(({ status, tokenName }) => ({ status, tokenName })),
      [
        { status: 404, tokenName: 'cleanup-job' },
        { status: 403, tokenName: 'reader' },
        { status: 404, tokenName: undefined },
        { status: 401, tokenName: undefined },
      ],
    );
    const text = JSON.stringify(server.logLines());
    for (const token of [ADMIN, READER, WRITER]) assert.not.match(text, token);
  },
);

scopes(
  'writes the name into the event as the CloudEvents authcontext, and `reports events` prints who deleted report 42 and when',
  async ({ server }) => {
    assert.is((await post(server, { id: 42, name: 'answer' }, ADMIN)).status, 200);
    assert.is((await server.request('/reports/42', { method: 'DELETE', token: WRITER })).status, 204);
    const { code, stdout, stderr } = await reports(['events', '--type', 'ReportDeleted'], {
      env: { REPORTS_DATA_DIR: server.dataDir },
    });
    assert.is(code, 0, stderr);
    const deletions = eventsOf(stdout).filter((event) => event['subject'] === '42');
    assert.is(deletions.length, 1);
    const [event] = deletions as [Record<string, unknown>];
    assert.is(event['authtype'], 'api_key');
    assert.is(event['authid'], 'cleanup-job');
    assert.match(String(event['time']), /^\d{4}-\d{2}-\d{2}T/);
    const created = await reports(['events', '--type', 'ReportCreated'], { env: { REPORTS_DATA_DIR: server.dataDir } });
    const create = created.stdout.split('\n').find((line) => line.includes('"subject":"42"')) ?? '';
    assert.match(create, '"authtype":"api_key","data"', 'an unnamed token: authtype without authid');
    for (const token of [ADMIN, READER, WRITER]) assert.not.match(stdout + created.stdout, token);
  },
);

scopes(
  'writes the name into the events of conditional writes too: a POST with If-None-Match: * and a DELETE with If-Match',
  async ({ server }) => {
    assert.is((await post(server, { id: 4700, name: 'once' }, WRITER, { 'If-None-Match': '*' })).status, 200);
    assert.is((await post(server, { id: 4700, name: 'once' }, WRITER, { 'If-None-Match': '*' })).status, 412);
    assert.is(
      (await server.request('/reports/4700', { method: 'DELETE', token: WRITER, headers: { 'If-Match': '"1"' } }))
        .status,
      204,
    );
    const { code, stdout, stderr } = await reports(['events'], { env: { REPORTS_DATA_DIR: server.dataDir } });
    assert.is(code, 0, stderr);
    const events = eventsOf(stdout).filter((event) => event['subject'] === '4700');
    assert.equal(
      events.map((event) => [event['type'], event['expectedversion'], event['authtype'], event['authid']]),
      [
        ['ReportCreated', 0, 'api_key', 'cleanup-job'],
        ['ReportDeleted', 1, 'api_key', 'cleanup-job'],
      ],
    );
  },
);

scopes.run();
