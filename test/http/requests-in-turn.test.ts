// Requests pipelined on one connection (src/http/requests-in-turn.ts), against a bare node:http
// server whose handler the test controls: one at a time and in order, a bound on how many may wait,
// and a connection closed when its client does not take an answer.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { inTurn, MAX_WAITING_REQUESTS } from '../../src/http/requests-in-turn.js';
import { once } from 'node:events';
import { until, withTimeout } from '../helpers/async.js';
import { openSocket, pipelined } from '../helpers/raw-http.js';

interface Bare {
  readonly url: string;
  /** Sockets the server has closed. */
  readonly closed: () => number;
  /** What a stop asks: each answer from now on closes its connection. */
  readonly closeAfterAnswers: () => void;
}

const turns = suite<{
  servers: Server[];
  clients: Socket[];
  start: (handler: RequestListener, sendTimeoutMs?: number) => Promise<Bare>;
}>('inTurn');

turns.before.each((context) => {
  context.servers = [];
  context.clients = [];
  context.start = async (handler, sendTimeoutMs = 60_000) => {
    const listener = inTurn(handler, { sendTimeoutMs });
    const server = createServer(listener);
    let closed = 0;
    server.on('connection', (socket: Socket) => socket.once('close', () => (closed += 1)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    context.servers.push(server);
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      closed: () => closed,
      closeAfterAnswers: listener.closeAfterAnswers,
    };
  };
});
turns.after.each(async ({ servers, clients }) => {
  for (const socket of clients) socket.destroy();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Reads answers until `count` status lines have arrived; resolves with the bodies in order. */
function answers(socket: Socket, count: number): Promise<string[]> {
  let text = '';
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const bodies = [...text.matchAll(/\r\n\r\n(#\d+)/g)].map((match) => match[1] as string);
      if (bodies.length >= count) resolve(bodies);
    });
  });
}

/** Keeps what `socket` receives; `ended` resolves when the server closed it. */
function received(socket: Socket): { text: () => string; ended: Promise<unknown> } {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { text: () => text, ended: withTimeout(once(socket, 'close'), 5000, 'the server to close the connection') };
}

turns(
  'at a stop, the answer in progress closes its connection, and a request pipelined behind it is never handled',
  async ({ start, clients }) => {
    const handled: string[] = [];
    let release = () => undefined as unknown;
    const bare = await start((request, response) => {
      handled.push(request.url ?? '');
      release = () => response.end('#0');
    });
    const socket = await openSocket(bare.url);
    clients.push(socket);
    const got = received(socket);
    socket.write(pipelined(['/first', '/second'], 2));
    await until(() => handled.length === 1, 'the first request to be handled');
    bare.closeAfterAnswers();
    release();
    await got.ended;
    // Handled, its write made and its answer sent nowhere: what a pipelined POST met before.
    assert.equal(handled, ['/first']);
    assert.match(got.text(), /\r\nConnection: close\r\n/i);
    assert.is([...got.text().matchAll(/HTTP\/1\.1 200/g)].length, 1);
  },
);

turns('at a stop, an answer already begun closes its connection once it is done', async ({ start, clients }) => {
  let release = () => undefined as unknown;
  const bare = await start((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    response.write('#');
    release = () => response.end('0');
  });
  const socket = await openSocket(bare.url);
  clients.push(socket);
  const got = received(socket);
  socket.write(pipelined(['/streaming'], 1));
  await until(() => got.text().includes('#'), 'the answer to begin');
  bare.closeAfterAnswers();
  release();
  // Kept alive, it stayed open until the client's next request or the keep-alive time-out.
  await got.ended;
  assert.match(got.text(), /keep-alive/i);
});

turns('hands pipelined requests to the handler one at a time, in order', async ({ start, clients }) => {
  let running = 0;
  let most = 0;
  const bare = await start((request, response) => {
    running += 1;
    most = Math.max(most, running);
    // Later requests finish sooner: out of turn, they would be answered first.
    const n = Number(request.url?.slice(1));
    setTimeout(
      () => {
        running -= 1;
        response.end(`#${n}`);
      },
      40 - 4 * n,
    );
  });
  const socket = await openSocket(bare.url);
  clients.push(socket);
  const got = answers(socket, 10);
  socket.write(Array.from({ length: 10 }, (_, n) => `GET /${n} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  assert.equal(
    await got,
    Array.from({ length: 10 }, (_, n) => `#${n}`),
  );
  assert.is(most, 1);
});

turns(
  `closes a connection with more than ${MAX_WAITING_REQUESTS} requests waiting, without handling them`,
  async ({ start, clients }) => {
    let handled = 0;
    const bare = await start((_request, response) => {
      handled += 1;
      setTimeout(() => response.end('#0'), 10);
    });
    const socket = await openSocket(bare.url);
    clients.push(socket);
    socket.write(pipelined(['/metrics'], 1900));
    await until(() => bare.closed() === 1, 'the server to close the connection');
    assert.ok(handled <= MAX_WAITING_REQUESTS + 1, `${handled} requests handled`);
  },
);

turns('answers as many pipelined requests as may wait, keeping the connection', async ({ start, clients }) => {
  const bare = await start((_request, response) => setTimeout(() => response.end('#1'), 1));
  const socket = await openSocket(bare.url);
  clients.push(socket);
  const got = answers(socket, MAX_WAITING_REQUESTS + 1);
  socket.write(pipelined(['/'], MAX_WAITING_REQUESTS + 1));
  assert.is((await got).length, MAX_WAITING_REQUESTS + 1);
  assert.is(bare.closed(), 0);
});

turns(
  'closes a connection whose client does not take its answer within the send time-out',
  async ({ start, clients }) => {
    // Far more than the kernel's buffers take for a client that reads nothing.
    const big = Buffer.alloc(64 * 1024 * 1024, 'x');
    const bare = await start((_request, response) => response.end(big), 200);
    const socket = await openSocket(bare.url);
    clients.push(socket);
    socket.pause();
    socket.write(pipelined(['/'], 2));
    await until(() => bare.closed() === 1, 'the server to close the connection of a client that reads nothing');
  },
);

turns(
  'answers a request whose handler takes longer than the send time-out (it counts from the answer)',
  async ({ start, clients }) => {
    const bare = await start((_request, response) => setTimeout(() => response.end('#2'), 300), 100);
    const socket = await openSocket(bare.url);
    clients.push(socket);
    const got = answers(socket, 2);
    socket.write(pipelined(['/'], 2));
    assert.equal(await got, ['#2', '#2']);
    assert.is(bare.closed(), 0);
  },
);

turns.run();
