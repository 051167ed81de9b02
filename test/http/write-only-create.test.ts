// A token with the scope write and not read is answered 403 to a GET; its creates must not answer
// what that GET would. A create of an existing id is 409 with the same message whether its body is
// the report's or not (no oracle for a guessed name and tag), and a create whose conditions only
// ask about the version (If-Match, If-None-Match naming versions) needs read. Its retries are
// recognised by their Idempotency-Key. A token with both scopes is answered as before.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-token-0123456789abcdef';
const WRITER = 'writer-token-0123456789abcdef';
const TOKENS = `${ADMIN}\ningest-job write ${WRITER}\n`;
const SCOPE_READ = 'Bearer realm="reports", error="insufficient_scope", scope="read"';

const writeOnly = suite<{ server: TestServer }>('write-only create');

writeOnly.before(async (context) => {
  const dir = await tempDir('reports-write-only-');
  const file = join(dir, 'tokens');
  await writeFile(file, TOKENS, { mode: 0o600 });
  context.server = await startTestServer({ REPORTS_TOKENS: '', REPORTS_TOKENS_FILE: file }, { dataDir: dir });
});
writeOnly.after(async ({ server }) => {
  await server.dispose();
  await rm(server.dataDir, { recursive: true, force: true });
});

const post = (server: TestServer, json: unknown, token: string, headers: Record<string, string> = {}) =>
  server.request('/reports', { method: 'POST', json, token, headers });

writeOnly(
  'answers a write-only token the same 409 whether its body is the live report or a guess, and changes nothing',
  async ({ server }) => {
    const report = { id: 8800, name: 'Alice diagnosis', tag: 'hiv' };
    assert.is((await post(server, report, ADMIN)).status, 200);
    const right = await post(server, report, WRITER);
    const wrong = await post(server, { ...report, tag: 'flu' }, WRITER);
    assert.is(right.status, 409);
    assert.is(wrong.status, 409);
    const rightBody = await right.text();
    assert.is(rightBody, await wrong.text());
    assert.not.ok(rightBody.includes('Alice'), rightBody);
    assert.ok(rightBody.includes('scope read'), rightBody);
    const read = await server.request('/reports/8800', { token: ADMIN });
    assert.equal(await read.json(), { name: 'Alice diagnosis', tag: 'hiv' });
    assert.is(read.headers.get('etag'), '"1"');
  },
);

writeOnly(
  "recognises a write-only token's own retry by its Idempotency-Key, and answers one without a key 409",
  async ({ server }) => {
    const report = { id: 8801, name: 'nightly import' };
    const key = { 'Idempotency-Key': 'b2c4f0f6-2a4e-4d36-9d8e-2b1f1c0a7e11' };
    const first = await post(server, report, WRITER, key);
    assert.is(first.status, 200);
    const retried = await post(server, report, WRITER, key);
    assert.is(retried.status, 200);
    assert.equal(await retried.json(), { name: 'nightly import' });
    assert.is((await post(server, report, WRITER)).status, 409);
  },
);

writeOnly(
  'answers a token with both scopes as before: 200 to an identical body, 409 to another',
  async ({ server }) => {
    const report = { id: 8802, name: 'quarterly', tag: 'finance' };
    assert.is((await post(server, report, ADMIN)).status, 200);
    const again = await post(server, report, ADMIN);
    assert.is(again.status, 200);
    assert.equal(await again.json(), { name: 'quarterly', tag: 'finance' });
    const other = await post(server, { ...report, name: 'monthly' }, ADMIN);
    assert.is(other.status, 409);
    assert.match(await other.text(), /different name or tag/);
  },
);

writeOnly(
  'answers 403 (scope read) to a write-only create whose condition only asks the version, before its body is read',
  async ({ server }) => {
    assert.is((await post(server, { id: 8803, name: 'probed' }, ADMIN)).status, 200);
    const asking: Record<string, string>[] = [{ 'If-Match': '"1"' }, { 'If-Match': '*' }, { 'If-None-Match': '"1"' }];
    for (const headers of asking) {
      const answer = await server.request('/reports', {
        method: 'POST',
        body: 'not json at all',
        token: WRITER,
        headers: { ...headers, 'Content-Type': 'application/json' },
      });
      assert.is(answer.status, 403, JSON.stringify(headers));
      assert.is(answer.headers.get('www-authenticate'), SCOPE_READ);
      assert.match(await answer.text(), /If-Match/);
    }
    // A token with both scopes may ask: 409 when the version matches (a create with If-Match never writes), 412 when not.
    assert.is((await post(server, { id: 8803, name: 'probed' }, ADMIN, { 'If-Match': '"2"' })).status, 412);
  },
);

writeOnly('lets a write-only token create only if absent with If-None-Match: *', async ({ server }) => {
  const star = { 'If-None-Match': '*' };
  assert.is((await post(server, { id: 8804, name: 'once' }, WRITER, star)).status, 200);
  assert.is((await post(server, { id: 8804, name: 'once' }, WRITER, star)).status, 412);
  assert.is((await server.request('/reports/8804', { method: 'DELETE', token: WRITER })).status, 204);
});

writeOnly.run();
