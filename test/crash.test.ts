// The durability promise end to end, with the real server in a child process: an acknowledged
// create survives SIGKILL; SIGTERM lets requests in flight finish and releases the data directory.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeEvent } from '../projections/codec.js';
import { openFileLog } from '../src/log/file/file-log.js';
import { collect, until, withTimeout } from './helpers/async.js';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { memoryLogger, tempDir, TEST_TOKEN } from './helpers/server.js';
import { readRecords } from '../src/log/record-batches.js';

const WORKERS = 32;
/** Acknowledged creates to wait for before the kill: several per worker. */
const ACKNOWLEDGED_BEFORE_KILL = 4 * WORKERS;
const GUARD_MS = 15_000;

interface Context {
  dataDir: string;
  children: ChildServer[];
}

const bodyOf = (id: string, name: string) => `{"id": ${id}, "name": ${JSON.stringify(name)}}`;

async function start(context: Context): Promise<ChildServer> {
  const child = await startChildServer({ REPORTS_DATA_DIR: context.dataDir });
  context.children.push(child);
  await child.waitReady();
  return child;
}

/** Runs `task` over `items` with at most `concurrency` at a time. */
async function eachLimited<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

async function reportsInReadModel(server: ChildServer): Promise<number> {
  const text = await (await server.request('/metrics', { token: null })).text();
  const match = /^reports_read_model_reports (\d+)$/m.exec(text);
  assert.ok(match, 'reports_read_model_reports is missing from /metrics');
  return Number(match[1]);
}

const crash = suite<Context>('server process crash and shutdown');
crash.before.each(async (context) => {
  context.dataDir = await tempDir('reports-crash-');
  context.children = [];
});
crash.after.each(async ({ dataDir, children }) => {
  for (const child of children) {
    child.kill('SIGKILL');
    await child.waitExit().catch(() => undefined);
  }
  await rm(dataDir, { recursive: true, force: true });
});

crash('keeps every acknowledged create after SIGKILL with requests in flight', async (context) => {
  const first = await start(context);
  const acknowledged = new Set<string>();
  const attempted = new Set<string>();
  let inFlight = 0;
  let killed = false;
  const workers = Array.from({ length: WORKERS }, async (_, worker) => {
    // Ids above 2^53, so a lost digit anywhere on the way would show as a missing report.
    for (let i = 0n; !killed; i += 1n) {
      const id = String(9_007_199_254_740_993n + BigInt(worker) * 1_000_000n + i);
      attempted.add(id);
      inFlight += 1;
      try {
        const response = await first.request('/reports', { method: 'POST', json: bodyOf(id, `report ${id}`) });
        await response.arrayBuffer();
        if (response.status === 200) acknowledged.add(id);
      } catch {
        return; // the connection died with the server
      } finally {
        inFlight -= 1;
      }
    }
  });
  // Under load long enough for many acknowledged writes, whatever the machine's speed.
  await until(() => acknowledged.size > ACKNOWLEDGED_BEFORE_KILL, `${ACKNOWLEDGED_BEFORE_KILL} acknowledged creates`, {
    timeoutMs: GUARD_MS,
  });
  const inFlightAtKill = inFlight;
  first.kill('SIGKILL');
  killed = true;
  assert.equal(await first.waitExit(), { code: null, signal: 'SIGKILL' });
  await withTimeout(Promise.all(workers), GUARD_MS, 'the load workers to stop');
  assert.ok(inFlightAtKill > 0, 'no request was in flight when the server was killed');
  assert.ok(acknowledged.size > WORKERS, `only ${acknowledged.size} creates were acknowledged before the kill`);

  const second = await start(context);
  const count = await reportsInReadModel(second);
  assert.ok(count >= acknowledged.size, `${count} reports after restart, ${acknowledged.size} acknowledged`);
  assert.ok(count <= attempted.size, `${count} reports after restart, only ${attempted.size} attempted`);
  const wrong: string[] = [];
  await eachLimited([...acknowledged], WORKERS, async (id) => {
    const same = await second.request('/reports', { method: 'POST', json: bodyOf(id, `report ${id}`) });
    const sameBody = await same.json();
    if (same.status !== 200 || JSON.stringify(sameBody) !== JSON.stringify({ name: `report ${id}` }))
      wrong.push(`${id}: retry answered ${same.status}`);
    const other = await second.request('/reports', { method: 'POST', json: bodyOf(id, 'another name') });
    await other.arrayBuffer();
    if (other.status !== 409) wrong.push(`${id}: another name answered ${other.status}`);
  });
  assert.equal(wrong.slice(0, 10), [], `${wrong.length} acknowledged ids misbehave after the restart`);
  assert.is(await reportsInReadModel(second), count, 'the checks themselves created reports');
});

/** A POST whose headers the server has taken (it answered 100 Continue) but whose body is held back. */
interface HeldRequest {
  readonly id: string;
  send(): Promise<{ status: number; body: string }>;
}

async function holdCreate(server: ChildServer, id: string): Promise<HeldRequest> {
  const body = bodyOf(id, `held ${id}`);
  const request = httpRequest(`${server.url}/reports`, {
    method: 'POST',
    agent: false,
    headers: {
      Authorization: `Bearer ${TEST_TOKEN}`,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      Expect: '100-continue',
    },
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      request.once('continue', resolve);
      request.once('error', reject);
    }),
    GUARD_MS,
    `100 Continue for report ${id}`,
  );
  return {
    id,
    async send() {
      request.end(body);
      const answer = await response;
      let text = '';
      for await (const chunk of answer) text += String(chunk);
      return { status: answer.statusCode ?? 0, body: text };
    },
  };
}

crash('finishes requests in flight on SIGTERM, exits 0 and removes the LOCK file', async (context) => {
  const server = await start(context);
  const held = await Promise.all(['1', '2', '3', '4', '5', '6', '7', '8'].map((id) => holdCreate(server, id)));
  server.kill('SIGTERM');
  await server.waitForLine((line) => String(line['msg']).startsWith('stopping'), 'that it is stopping', GUARD_MS);
  const answers = await withTimeout(
    Promise.all(held.map((h) => h.send())),
    GUARD_MS,
    'the held requests to be answered',
  );
  assert.equal(
    answers,
    held.map((h) => ({ status: 200, body: JSON.stringify({ name: `held ${h.id}` }) })),
  );
  assert.equal(await server.waitExit(), { code: 0, signal: null });
  assert.is(
    await stat(join(context.dataDir, 'LOCK')).then(
      () => 'present',
      (error: NodeJS.ErrnoException) => error.code,
    ),
    'ENOENT',
  );

  const log = await openFileLog({ dir: context.dataDir, logger: memoryLogger().logger });
  const records = await collect(readRecords(log, new Map()));
  await log.close();
  const ids = records.map((record) => {
    const decoded = decodeEvent(record.value);
    return decoded.ok ? decoded.event.data.id : `invalid: ${decoded.reason}`;
  });
  assert.equal(
    ids.sort(),
    held.map((h) => h.id),
  );
});

crash.run();
