// Request builders and fixtures shared by the HTTP tests. Ids come from a random seed so the
// contract suite can run against a log (a Kafka topic) that other runs have written to.
import { randomBytes, randomInt } from 'node:crypto';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Env } from '../../src/config.js';
import type { TestServer } from '../helpers/server.js';

export type StartServer = (env?: Env) => Promise<TestServer>;

/** Hands out distinct int64 ids (as decimal strings), counting up from a random seed below 2^62. */
export function idSource(): () => string {
  let next = BigInt(randomInt(1, 2 ** 46)) * 65_536n;
  return () => (next++).toString();
}

/** A value no metric, log line or other test could contain by accident. */
export function distinctive(label: string): string {
  return `${label}-${randomBytes(6).toString('hex')}`;
}

/** A NewReport body as text. `id` is written verbatim, so int64 and 1.0-style literals stay exact. */
export function reportBody(id: string, name: string, tag?: string | null, extra: Record<string, unknown> = {}): string {
  const fields = [`"id":${id}`, `"name":${JSON.stringify(name)}`];
  if (tag !== undefined) fields.push(`"tag":${JSON.stringify(tag)}`);
  for (const [key, value] of Object.entries(extra)) fields.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  return `{${fields.join(',')}}`;
}

export function postReport(server: TestServer, id: string, name: string, tag?: string | null): Promise<Response> {
  return server.request('/reports', { method: 'POST', json: reportBody(id, name, tag) });
}

export function postJson(
  server: TestServer,
  json: string,
  init: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  return server.request('/reports', { method: 'POST', json, ...init });
}

export function deleteReport(server: TestServer, id: string, init: { token?: string | null } = {}): Promise<Response> {
  return server.request(`/reports/${id}`, { method: 'DELETE', ...init });
}

/** Records in the log, summed over partitions. */
export async function logHead(server: TestServer): Promise<number> {
  let total = 0;
  for (const offset of (await server.log.head()).values()) total += offset;
  return total;
}

/** Frees a fixed id (such as 1 or the int64 bounds) that an earlier run on a shared log may hold. */
export async function claim(server: TestServer, id: string): Promise<void> {
  const response = await deleteReport(server, id);
  await response.arrayBuffer();
  assert.ok(response.status === 204 || response.status === 404, `could not free id ${id}: ${response.status}`);
}

/** The uvu context of a suite that runs against one server, started before its first test. */
export class ServerContext {
  private current: TestServer | undefined;

  get server(): TestServer {
    if (this.current === undefined) throw new Error('the suite server is not running');
    return this.current;
  }

  set server(server: TestServer) {
    this.current = server;
  }

  async dispose(): Promise<void> {
    await this.current?.dispose();
    this.current = undefined;
  }
}

/** A suite whose tests share one server started with `env`. */
export function serverSuite(title: string, start: StartServer, env: Env = {}): Test<ServerContext> {
  const test = suite(title, new ServerContext());
  test.before(async (context) => {
    context.server = await start(env);
  });
  test.after(async (context) => {
    await context.dispose();
  });
  return test;
}
