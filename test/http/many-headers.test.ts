// A request with thousands of headers (within the size limit) is read whole: Node keeps only the
// first 2,000 unless told otherwise, and a condition or a key after them was dropped unseen.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorAnswer, openSocket, readUntilEnd } from '../helpers/raw-http.js';
import { startTestServer, TEST_TOKEN, type TestServer } from '../helpers/server.js';

const headers = suite<{ server: TestServer }>('a request with thousands of headers');

headers.before(async (context) => {
  context.server = await startTestServer();
});
headers.after(async ({ server }) => {
  await server.dispose();
});

/** The raw answer to `method path` with `filler` headers before `last` (header lines without CRLF). */
async function sendAfterFiller(server: TestServer, method: string, path: string, filler: number, last: string[]) {
  const socket = await openSocket(server.url);
  const answer = readUntilEnd(socket);
  const fill = Array.from({ length: filler }, (_, i) => `X-F${i}: y\r\n`).join('');
  socket.write(
    `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n${fill}` +
      `${last.map((line) => `${line}\r\n`).join('')}Connection: close\r\n\r\n`,
  );
  return answer;
}

headers(
  'honours an If-Match that comes after 2,000 other headers: a DELETE of another version is 412, not done',
  async ({ server }) => {
    assert.is((await server.request('/reports', { method: 'POST', json: { id: 7001, name: 'kept' } })).status, 200);
    const answer = errorAnswer(await sendAfterFiller(server, 'DELETE', '/reports/7001', 2_000, ['If-Match: "999"']));
    assert.is(answer.status, 412, answer.head);
    // The report is still there, at its version 1.
    const read = await server.request('/reports/7001');
    assert.is(read.status, 200);
    assert.is(read.headers.get('etag'), '"1"');
  },
);

headers(
  'sees an Authorization repeated after 2,000 other headers (401), as it sees one repeated at once',
  async ({ server }) => {
    const answer = errorAnswer(
      await sendAfterFiller(server, 'DELETE', '/reports/7002', 2_000, [`Authorization: Bearer ${TEST_TOKEN}`]),
    );
    assert.is(answer.status, 401, answer.head);
  },
);

headers('still answers 431 to headers larger than the limit, however many', async ({ server }) => {
  const answer = errorAnswer(await sendAfterFiller(server, 'DELETE', '/reports/7003', 5_000, []));
  assert.is(answer.status, 431, answer.head);
});

headers.run();
