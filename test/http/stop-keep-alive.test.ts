// A stop while clients hold busy keep-alive connections: such a connection is never idle, so it was
// left open, and its client went on being served (new writes acknowledged) until the shutdown's
// grace cut every connection, requests in flight included. Now each answer after the stop began
// closes its connection: the clients are told at once and the stop ends long before the grace.
import { Agent, request } from 'node:http';
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, tempDir } from '../helpers/server.js';
import { TEST_TOKEN } from '../helpers/token.js';

const test = suite('stopping with busy keep-alive connections');
const GRACE_MS = 20_000;
const CLIENTS = 4;

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  readonly sentAt: number;
}

/** One POST on `agent`'s pooled connection: its status and Connection header, or the error's code. */
function post(url: string, agent: Agent, id: number): Promise<Answer | string> {
  const sentAt = performance.now();
  return new Promise((resolve) => {
    const sent = request(
      `${url}/reports`,
      {
        method: 'POST',
        agent,
        headers: { Authorization: `Bearer ${TEST_TOKEN}`, 'Content-Type': 'application/json' },
      },
      (response) => {
        response.resume();
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, sentAt }),
        );
      },
    );
    sent.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    sent.end(JSON.stringify({ id, name: `kept alive ${id}` }));
  });
}

test('each answer after the stop began closes its connection, and the stop ends long before the grace', async () => {
  const dataDir = await tempDir();
  const server = await startTestServer({}, { dataDir, shutdownGraceMs: GRACE_MS });
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  let nextId = 1;
  let stopAt = Infinity;
  const afterStop: Answer[] = [];
  const failures: string[] = [];
  // Each client writes one report after the other on its connection until it is turned away.
  const client = async (): Promise<void> => {
    for (;;) {
      const answer = await post(server.url, agent, nextId++);
      if (typeof answer === 'string') return void failures.push(answer);
      assert.is(answer.status, 200);
      if (answer.sentAt >= stopAt) afterStop.push(answer);
    }
  };
  try {
    const clients = Array.from({ length: CLIENTS }, client);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopAt = performance.now();
    await server.close();
    const stoppedMs = performance.now() - stopAt;
    await Promise.all(clients);
    assert.ok(stoppedMs < GRACE_MS / 4, `stopped in ${Math.round(stoppedMs)} ms, the grace is ${GRACE_MS} ms`);
    // At most one answer per client after the stop (the request it had sent), and it says close.
    assert.ok(afterStop.length <= CLIENTS, `${afterStop.length} answers to requests sent after the stop began`);
    for (const answer of afterStop) assert.is(answer.connection, 'close');
    // Then each client found the server gone: refused, or its connection closed as idle (between an
    // answer and its next request, as Node closes idle connections at a stop; EPIPE if it was writing).
    assert.is(failures.length, CLIENTS);
    for (const failure of failures) assert.ok(['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(failure), failure);
  } finally {
    agent.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
