// The whole connection cap held by hostile clients, against the real server in a child process with
// the default limits (1,000 connections, a 10 s header time-out): clients that send nothing and never
// close, clients that pipeline GET /metrics and read nothing, and both together. A client that keeps
// retrying is served within REPORTS_HEADERS_TIMEOUT_MS plus one second of the cap filling, and the
// server's resident memory stays under RSS_BOUND_BYTES throughout (its peak, VmHWM, is read at the end;
// a sampler stops the server at once if it goes over, so a regression fails rather than eats the machine).
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { MAX_WAITING_REQUESTS } from '../../src/http/requests-in-turn.js';
import { until } from '../helpers/async.js';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { openSocket, pipelined } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/server.js';

const DEFAULTS = loadConfig({}).http;
/** What the server may hold at its peak under any of these floods (it starts at about 75 MB). */
const RSS_BOUND_BYTES = 300 * 1024 * 1024;
/** How often a client shed over the cap tries again. */
const RETRY_EVERY_MS = 100;

interface Context {
  dataDir: string;
  server: ChildServer;
  clients: Socket[];
  sampler: NodeJS.Timeout;
  overBound: number | undefined;
  /** Hostile connections the server has already ended (a time-out of its own): each frees a slot of the cap. */
  ended: number;
  /** When the first hostile connection opened (0: none yet). */
  firstOpenedAt: number;
  /** When the first pipelining connection had sent its requests (0: none yet). */
  firstPipelinedAt: number;
}

const cap = suite<Context>(`the default cap of ${DEFAULTS.maxConnections} connections held by hostile clients`);

/** A line of /proc/<pid>/status, in bytes. */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) * 1024;
}

cap.before.each(async (context) => {
  context.dataDir = await tempDir();
  context.server = await startChildServer({ REPORTS_DATA_DIR: context.dataDir });
  // Not waitReady: its fetch keeps a pooled connection open, which would hold one slot of the cap.
  await until(async () => (await status(context.server.url, '/readyz')) === 200, 'the server to be ready');
  context.clients = [];
  context.overBound = undefined;
  context.ended = 0;
  context.firstOpenedAt = 0;
  context.firstPipelinedAt = 0;
  const { pid } = context.server;
  context.sampler = setInterval(() => {
    if (context.server.exited()) return;
    const rss = statusBytes(pid, 'VmRSS');
    if (rss <= RSS_BOUND_BYTES) return;
    context.overBound = rss;
    context.server.kill('SIGKILL');
  }, 20);
});

cap.after.each(async (context) => {
  clearInterval(context.sampler);
  for (const socket of context.clients) socket.destroy();
  context.server.kill('SIGKILL');
  await context.server.waitExit().catch(() => undefined);
  await rm(context.dataDir, { recursive: true, force: true });
});

/** `count` connections, opened a hundred at a time (one by one, the first would time out before the last opened). */
async function connections(
  context: Context,
  count: number,
  opened: (socket: Socket) => void = () => undefined,
): Promise<void> {
  for (let done = 0; done < count; done += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - done) }, () => openSocket(context.server.url, { halfOpen: true })),
    );
    if (context.firstOpenedAt === 0) context.firstOpenedAt = Date.now();
    for (const socket of batch) {
      socket.once('end', () => (context.ended += 1));
      opened(socket);
    }
    context.clients.push(...batch);
  }
}

/** `count` connections that send nothing and keep their end open when the server ends its own. */
function idleClients(context: Context, count: number): Promise<void> {
  return connections(context, count);
}

/** `count` connections that each send `requests` pipelined GETs of `paths` in turn and read nothing. */
function pipeliningClients(context: Context, count: number, requests: number, paths: readonly string[]): Promise<void> {
  const text = pipelined(paths, requests);
  return connections(context, count, (socket) => {
    socket.pause();
    socket.write(text);
    if (context.firstPipelinedAt === 0) context.firstPipelinedAt = Date.now();
  });
}

/** The status of one GET on a new connection of its own (0 when the connection failed). */
function status(url: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    // agent: false, a connection of its own: fetch would reuse a pooled one, admitted long before.
    const request = get(`${url}${path}`, { agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', () => resolve(0));
  });
}

const health = (url: string) => status(url, '/healthz');

/**
 * A new connection is refused (503) while every slot is held. On a loaded machine the filling can
 * take long enough that the server has already ended the first hostile connections by its own
 * time-outs (a paused client does not see its end), which frees their slots, and a 200 is right
 * too: from the header time-out after the first hostile connection opened (one that sends nothing),
 * or from the keep-alive time-out after the first pipelining one sent its requests (its answers all
 * fit in the sockets' buffers, so it is idle between requests, and Node closes it).
 */
async function expectCapFull(context: Context): Promise<void> {
  const answer = await health(context.server.url);
  const now = Date.now();
  const heldMs = now - context.firstOpenedAt;
  const idleSincePipelinedMs = context.firstPipelinedAt === 0 ? 0 : now - context.firstPipelinedAt;
  const maybeFreed =
    context.ended > 0 || heldMs >= DEFAULTS.headersTimeoutMs || idleSincePipelinedMs >= DEFAULTS.keepAliveTimeoutMs;
  assert.ok(
    answer === 503 || maybeFreed,
    `the cap is full: a new connection got ${answer} ${heldMs} ms after the first hostile connection opened (${idleSincePipelinedMs} ms after the first pipelining one), none of them ended`,
  );
}

/**
 * Retries GET /healthz until it is served; fails unless that is within the header time-out plus one
 * second of `cappedAt`, when the last hostile connection opened.
 */
async function servedWithinTimeOut(context: Context, cappedAt: number): Promise<void> {
  const served = async () => {
    if (context.overBound !== undefined)
      throw new Error(`the server's RSS went over the bound: ${(context.overBound / 2 ** 20).toFixed(0)} MB`);
    return (await health(context.server.url)) === 200;
  };
  await until(
    served,
    `GET /healthz to be served within the header time-out (${DEFAULTS.headersTimeoutMs} ms) plus one second`,
    {
      timeoutMs: cappedAt + DEFAULTS.headersTimeoutMs + 1000 - Date.now(),
      everyMs: RETRY_EVERY_MS,
    },
  );
}

function expectUnderBound(context: Context): void {
  assert.is(
    context.overBound,
    undefined,
    `the server's RSS went over the bound: ${((context.overBound ?? 0) / 2 ** 20).toFixed(0)} MB`,
  );
  const peak = statusBytes(context.server.pid, 'VmHWM');
  assert.ok(peak < RSS_BOUND_BYTES, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);
}

cap(
  'clients that send nothing and keep their connections open: a client retrying is served within the header time-out plus one second',
  async (context) => {
    await idleClients(context, DEFAULTS.maxConnections);
    const cappedAt = Date.now();
    await expectCapFull(context);
    await servedWithinTimeOut(context, cappedAt);
    expectUnderBound(context);
  },
);

cap(
  'half of them, and half pipelining 200 GET /metrics each and reading nothing: served as soon, and the RSS stays bounded',
  async (context) => {
    await idleClients(context, DEFAULTS.maxConnections / 2);
    // 200 answers of 12 KB each per connection: before such a connection was closed for pipelining
    // too much, every answer was built and held until the client read it (it never does).
    await pipeliningClients(context, DEFAULTS.maxConnections / 2, 200, ['/metrics']);
    await servedWithinTimeOut(context, Date.now());
    expectUnderBound(context);
  },
);

cap(
  `half of them, and half pipelining the most that may wait (${MAX_WAITING_REQUESTS + 1} requests) and reading nothing: served as soon`,
  async (context) => {
    await idleClients(context, DEFAULTS.maxConnections / 2);
    await pipeliningClients(context, DEFAULTS.maxConnections / 2, MAX_WAITING_REQUESTS + 1, [
      '/metrics',
      '/openapi.json',
      '/healthz',
    ]);
    const cappedAt = Date.now();
    await expectCapFull(context);
    await servedWithinTimeOut(context, cappedAt);
    expectUnderBound(context);
  },
);

cap.run();
