// The guards of the HTTP server (src/http/connection-guard.ts) around a handler of the test's own,
// with real sockets: connections answered by the server itself are closed, not only ended (so a
// client that keeps its end open cannot keep its slot under the cap), shed connections warn once
// per interval, and what Node would answer with an empty body (or not at all) gets the Error body.
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { HttpLimits } from '../../src/config.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { until } from '../helpers/async.js';
import { errorAnswer, openSocket, readUntilEnd } from '../helpers/raw-http.js';
import { memoryLogger } from '../helpers/server.js';

const limits: HttpLimits = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, maxConnections: 3 };

interface Guarded {
  readonly url: string;
  readonly server: Server;
  readonly warnings: () => Record<string, unknown>[];
  /** Connections the server holds open (shed ones included). */
  readonly open: () => Promise<number>;
  readonly clients: Socket[];
}

const guard = suite<{ servers: Guarded[]; start: (overrides?: Partial<HttpLimits>) => Promise<Guarded> }>(
  'guardConnections',
);

guard.before.each((context) => {
  context.servers = [];
  context.start = async (overrides = {}) => {
    const { logger, lines } = memoryLogger();
    const { server } = createHttpServer(
      (_request, response: ServerResponse) => response.end('{"status":"ok"}'),
      { ...limits, ...overrides },
      logger,
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const guarded: Guarded = {
      url: `http://127.0.0.1:${port}`,
      server,
      warnings: () => lines().filter((line) => line['level'] === 40),
      open: () =>
        new Promise((resolve, reject) =>
          server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        ),
      clients: [],
    };
    context.servers.push(guarded);
    return guarded;
  };
});
guard.after.each(async ({ servers }) => {
  for (const guarded of servers) {
    for (const socket of guarded.clients) socket.destroy();
    guarded.server.closeAllConnections();
    await new Promise((resolve) => guarded.server.close(resolve));
  }
});

async function client(guarded: Guarded, halfOpen = true): Promise<Socket> {
  const socket = await openSocket(guarded.url, { halfOpen });
  guarded.clients.push(socket);
  return socket;
}

guard('closes a connection it answered 408, also when the client keeps its end open', async ({ start }) => {
  const guarded = await start();
  const socket = await client(guarded);
  const text = await readUntilEnd(socket);
  assert.is(errorAnswer(text).status, 408);
  // The server ended its side; before the fix it then waited for ever for the client's FIN.
  await until(async () => (await guarded.open()) === 0, 'the server to close the connection it answered 408');
});

guard(
  'serves a new connection once connections that sent nothing have been answered 408, with the cap full of them',
  async ({ start }) => {
    const guarded = await start();
    const idle = await Promise.all([client(guarded), client(guarded), client(guarded)]);
    const shed = errorAnswer(await readUntilEnd(await client(guarded, false)));
    assert.is(shed.status, 503);
    await Promise.all(idle.map(readUntilEnd));
    await until(async () => {
      const health = await fetch(`${guarded.url}/healthz`).catch(() => undefined);
      await health?.arrayBuffer();
      return health?.status === 200;
    }, 'a request to be served while the idle clients keep their ends open');
  },
);

guard(
  'closes a connection it shed over the cap without waiting for the header time-out, also when the client keeps its end open',
  async ({ start }) => {
    // Until the header time-out ran out on it, the shed connection held a file descriptor.
    const guarded = await start({ headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    const held = await Promise.all([client(guarded, false), client(guarded, false), client(guarded, false)]);
    const shed = await client(guarded);
    assert.is(errorAnswer(await readUntilEnd(shed)).status, 503);
    await until(async () => (await guarded.open()) === held.length, 'the server to close the connection it shed');
  },
);

guard('logs one warning for a burst of connections shed over the cap, not one per connection', async ({ start }) => {
  const guarded = await start();
  await Promise.all([client(guarded, false), client(guarded, false), client(guarded, false)]);
  const shed = await Promise.all(Array.from({ length: 20 }, () => client(guarded, false)));
  await Promise.all(shed.map(readUntilEnd));
  const warnings = guarded.warnings();
  assert.is(warnings.length, 1, JSON.stringify(warnings));
  assert.match(String(warnings[0]?.['msg']), /connection shed/);
});

guard('answers an HTTP/1.1 request without Host with 400 and the Error body', async ({ start }) => {
  const guarded = await start();
  const socket = await client(guarded, false);
  socket.write('GET /healthz HTTP/1.1\r\n\r\n');
  const { status, body, head } = errorAnswer(await readUntilEnd(socket));
  assert.is(status, 400);
  assert.match(head, /content-type: application\/json/i);
  assert.match(body.message, /Host/);
});

guard('answers an Expect other than 100-continue with 417 and the Error body', async ({ start }) => {
  const guarded = await start();
  const socket = await client(guarded, false);
  socket.write('POST /reports HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 2\r\n\r\n');
  const { status, body } = errorAnswer(await readUntilEnd(socket));
  assert.is(status, 417);
  assert.match(body.message, /Expect.*"foo"/);
});

guard('answers CONNECT with 501 and the Error body, then closes the connection', async ({ start }) => {
  const guarded = await start();
  const socket = await client(guarded);
  socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  const { status, body } = errorAnswer(await readUntilEnd(socket));
  assert.is(status, 501);
  assert.match(body.message, /CONNECT/);
  await until(async () => (await guarded.open()) === 0, 'the server to close the CONNECT connection');
});

guard.run();
