import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseResponse } from './http-client.js';
import { runPaced } from './open-loop.js';

const parsing = suite('parseResponse');

parsing('reads a Content-Length body and says where the next response starts', () => {
  const first = 'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}';
  const parsed = parseResponse(`${first}HTTP/1.1 200 OK\r\n`);
  assert.equal(parsed?.answer, { status: 201, body: '{"a":1}' });
  assert.is(parsed?.length, first.length);
  assert.is(parsed?.close, false);
});

parsing('waits for the rest of a head or a body', () => {
  assert.is(parseResponse('HTTP/1.1 200 OK\r\nContent-Length: 7\r\n'), undefined);
  assert.is(parseResponse('HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{"a"'), undefined);
});

parsing('reads a chunked body, and no body for 204', () => {
  const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n';
  assert.equal(parseResponse(chunked)?.answer, { status: 200, body: 'abcde' });
  assert.is(parseResponse(chunked)?.length, chunked.length);
  assert.is(parseResponse(chunked.slice(0, -2)), undefined);
  const noContent = 'HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n';
  assert.equal(parseResponse(`${noContent}HTTP/1.1`), {
    answer: { status: 204, body: '' },
    length: noContent.length,
    close: true,
  });
});

parsing('refuses bytes that are not an HTTP response', () => {
  assert.throws(() => parseResponse('SSH-2.0-OpenSSH\r\n\r\n'), /not an HTTP response/);
  assert.throws(() => parseResponse('HTTP/1.1 200 OK\r\n\r\nbody until close'), /Content-Length/);
});

parsing.run();

/** A server answering POST /reports with the handler's help; its URL. */
async function serve(
  handle: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => handle(request, response, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const paced = suite('runPaced');

paced('sends every request once, with its own id, its body and the bearer token, and counts each status', async () => {
  const seen: string[] = [];
  const { url, server } = await serve((request, response, body) => {
    const { id } = JSON.parse(body) as { id: number };
    seen.push(`${request.method} ${request.url} ${request.headers.authorization} ${id}`);
    response.statusCode = id % 4 === 0 ? 409 : 201;
    response.end('{}');
  });
  try {
    let id = 0;
    const result = await runPaced({
      url,
      connections: 4,
      durationS: 0.5,
      ratePerS: 200,
      token: 't0k',
      nextId: () => ++id,
    });
    assert.is(result.completed, 100);
    assert.equal(result.statusCounts, { '201': 75, '409': 25 });
    assert.is(result.non2xx, 25);
    assert.is(result.errors, 0);
    assert.equal(seen.sort(), Array.from({ length: 100 }, (_, i) => `POST /reports Bearer t0k ${i + 1}`).sort());
  } finally {
    await close(server);
  }
});

paced(
  'replaces a connection the server closes, and counts a request it dropped as an error, not as an answer',
  async () => {
    const { url, server } = await serve((request, response, body) => {
      const { id } = JSON.parse(body) as { id: number };
      if (id % 10 === 0) return void request.socket.destroy();
      if (id % 7 === 0) response.setHeader('Connection', 'close');
      response.end('{}');
    });
    try {
      let id = 0;
      const result = await runPaced({ url, connections: 2, durationS: 0.5, ratePerS: 100, nextId: () => ++id });
      assert.is(result.errors, 5);
      assert.equal(result.statusCounts, { '200': 45 });
    } finally {
      await close(server);
    }
  },
);

paced('counts latency from when a request was due, not from when a free connection sent it', async () => {
  const { url, server } = await serve((_request, response) => {
    setTimeout(() => response.end('{}'), 20);
  });
  try {
    let id = 0;
    // One connection serves 50 answers a second; 200 a second are offered for half a second.
    const result = await runPaced({ url, connections: 1, durationS: 0.5, ratePerS: 200, nextId: () => ++id });
    assert.is(result.completed, 100);
    // The last request was due at 0.5 s and answered after about 100 × 20 ms = 2 s.
    assert.ok(result.p999Ms > 1200, `p99.9 ${result.p999Ms} ms`);
    assert.ok(result.p50Ms > 600, `p50 ${result.p50Ms} ms`);
    assert.ok(result.requestsPerSecondMean < 70, `${result.requestsPerSecondMean} req/s`);
  } finally {
    await close(server);
  }
});

paced.run();
