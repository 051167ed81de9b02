// Reading a JSON request body (src/http/json-request.ts) on a real server: what is refused before
// the body is parsed, and what is accepted, beyond the contract suite's cases.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_JSON_DEPTH } from '../../src/http/json-body.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { idSource, logHead, postJson } from './requests.js';
import { expectError, expectJson } from './responses.js';

const body = suite<{ server: TestServer }>('reading a JSON request body');
const nextId = idSource();

body.before(async (context) => {
  context.server = await startTestServer();
});
body.after(async ({ server }) => server.dispose());

/** A NewReport whose unknown property `extra` nests arrays `depth` levels deep (the body itself is one more). */
const nestedBody = (id: string, depth: number) =>
  `{"id":${id},"name":"n","extra":${'['.repeat(depth)}${']'.repeat(depth)}}`;

body(
  `refuses 30,000 nested arrays with 400 naming the limit of ${MAX_JSON_DEPTH} levels, not the engine's stack overflow`,
  async ({ server }) => {
    const message = await expectError(await postJson(server, '['.repeat(30_000)), 400);
    assert.is(message, `request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  },
);

body(`accepts ${MAX_JSON_DEPTH} levels in all, refuses one more`, async ({ server }) => {
  assert.equal(await expectJson(await postJson(server, nestedBody(nextId(), MAX_JSON_DEPTH - 1)), 200), { name: 'n' });
  await expectError(await postJson(server, nestedBody(nextId(), MAX_JSON_DEPTH)), 400, /more than 64 levels deep/);
});

body('does not count brackets inside strings as nesting', async ({ server }) => {
  const name = `${'['.repeat(100)}"{\\"`;
  assert.equal(await expectJson(await postJson(server, `{"id":${nextId()},"name":${JSON.stringify(name)}}`), 200), {
    name,
  });
});

body('refuses a body that is not UTF-8 with 400, and writes nothing', async ({ server }) => {
  const before = await logHead(server);
  const bytes = Buffer.concat([Buffer.from(`{"id":${nextId()},"name":"caf`), Buffer.from([0xe9]), Buffer.from('"}')]);
  const response = await server.request('/reports', {
    method: 'POST',
    body: bytes,
    headers: { 'Content-Type': 'application/json' },
  });
  assert.is(await expectError(response, 400), 'request body is not valid UTF-8');
  assert.is(await logHead(server), before);
});

body('keeps U+FFFD that the client sent as UTF-8 (EF BF BD)', async ({ server }) => {
  assert.equal(await expectJson(await postJson(server, `{"id":${nextId()},"name":"a\uFFFDb"}`), 200), {
    name: 'a\uFFFDb',
  });
});

for (const charset of ['utf8', 'UTF8', 'utf-8', 'UTF-8']) {
  body(`accepts charset=${charset}`, async ({ server }) => {
    const response = await postJson(server, `{"id":${nextId()},"name":"é"}`, {
      headers: { 'Content-Type': `application/json; charset=${charset}` },
    });
    assert.equal(await expectJson(response, 200), { name: 'é' });
  });
}

body('still refuses another charset with 415', async ({ server }) => {
  await expectError(
    await postJson(server, `{"id":${nextId()},"name":"x"}`, {
      headers: { 'Content-Type': 'application/json; charset=latin1' },
    }),
    415,
    /charset must be utf-8/,
  );
});

/** POST /reports with `bytes` as the body, sent with Content-Encoding `encoding`. */
const postEncoded = (server: TestServer, bytes: Buffer, encoding: string) =>
  server.request('/reports', {
    method: 'POST',
    body: bytes,
    headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
  });

body(
  'reads a gzip, deflate or br body as the JSON it inflates to, the coding named in any case',
  async ({ server }) => {
    // Content codings are case-insensitive (RFC 9110 section 8.4.1): GZIP is gzip.
    const compress = {
      gzip: gzipSync,
      deflate: deflateSync,
      br: brotliCompressSync,
      GZIP: gzipSync,
      Br: brotliCompressSync,
    };
    for (const [encoding, squeeze] of Object.entries(compress)) {
      const json = `{"id":${nextId()},"name":"packed ${encoding}"}`;
      const response = await postEncoded(server, squeeze(Buffer.from(json)), encoding);
      assert.equal(await expectJson(response, 200), { name: `packed ${encoding}` });
    }
  },
);

body(
  'refuses with 413 a compressed body that inflates past the limit (a gzip bomb), and writes nothing',
  async ({ server }) => {
    const before = await logHead(server);
    const bomb = gzipSync(Buffer.from(`{"id":${nextId()},"name":"${' '.repeat(1_000_000)}"}`));
    assert.ok(bomb.length < 65_536, 'the compressed body itself is within the limit');
    await expectError(await postEncoded(server, bomb, 'gzip'), 413);
    assert.is(await logHead(server), before);
  },
);

body('refuses a body that does not inflate with 400, and another encoding with 415', async ({ server }) => {
  const json = Buffer.from(`{"id":${nextId()},"name":"x"}`);
  await expectError(await postEncoded(server, json, 'gzip'), 400, /could not be read/);
  await expectError(await postEncoded(server, json, 'compress'), 415, /encoding is not supported/);
});

body.run();
