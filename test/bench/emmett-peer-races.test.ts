// The Emmett peer of `make bench` is the same service before it is timed: racing creates of one id
// are decided by the event store's optimistic concurrency, exactly one different body wins, an
// identical one is a retry and appends nothing. Against a real PostgreSQL (postgres.ts, as the
// bench starts it) and the peer in its own process, as the bench runs it. Without initdb/pg_ctl the
// suite is left out with a loud message; under CI=true it fails instead.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getPostgreSQLEventStore, type PostgresEventStore } from '@event-driven-io/emmett-postgresql';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reportStreamId, type ReportEvent } from './emmett-reports.js';
import { findPostgresBin, startPostgres, type Postgres } from './postgres.js';
import { baseEnv, freePort, startServerProcess, type ServerProcess } from './server-process.js';

const RACERS = 20;
const ROUNDS = 5;
const TOKEN = randomBytes(12).toString('base64url');

interface Context {
  database: Postgres;
  peer: ServerProcess;
  eventStore: PostgresEventStore;
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

async function post(peer: ServerProcess, body: object): Promise<Answer> {
  const response = await fetch(`${peer.url}/reports`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function del(peer: ServerProcess, id: number): Promise<number> {
  const response = await fetch(`${peer.url}/reports/${id}`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  await response.arrayBuffer();
  return response.status;
}

/** Every event in the report's stream, read through Emmett's own store. */
async function eventTypes({ eventStore }: Context, id: number): Promise<string[]> {
  const { events } = await eventStore.readStream<ReportEvent>(reportStreamId(String(id)));
  return events.map((event) => event.type);
}

function count(answers: readonly Answer[], status: number): number {
  return answers.filter((answer) => answer.status === status).length;
}

const races = suite<Context>('Emmett peer: racing writes');
const postgresBin = findPostgresBin();

if (postgresBin !== undefined) {
  let dir = '';
  races.before(async (context) => {
    dir = await mkdtemp(join(tmpdir(), 'report-store-emmett-test-'));
    context.database = startPostgres(postgresBin, dir, await freePort());
    const { socketDir, port, user } = context.database;
    context.peer = await startServerProcess({
      script: fileURLToPath(new URL('./emmett-server.js', import.meta.url)),
      env: {
        ...baseEnv(),
        BENCH_TOKEN: TOKEN,
        PGHOST: socketDir,
        PGPORT: String(port),
        PGUSER: user,
        PGDATABASE: 'postgres',
      },
    });
    context.eventStore = getPostgreSQLEventStore(
      `postgresql://${user}@${encodeURIComponent(socketDir)}:${port}/postgres`,
    );
  });
  races.after(async ({ database, peer, eventStore }) => {
    await eventStore?.close();
    await peer?.stop();
    database?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  races(
    `gives exactly one 200 and ${RACERS - 1} 409s to ${RACERS} racing creates of one id with different names, ${ROUNDS} rounds`,
    async (context) => {
      for (let id = 1; id <= ROUNDS; id += 1) {
        const bodies = Array.from({ length: RACERS }, (_, racer) => ({ id, name: `racer ${racer}`, tag: 'race' }));
        const answers = await Promise.all(bodies.map((body) => post(context.peer, body)));
        assert.is(count(answers, 200), 1, `round ${id}: ${JSON.stringify(answers.map((answer) => answer.status))}`);
        assert.is(
          count(answers, 409),
          RACERS - 1,
          `round ${id}: ${JSON.stringify(answers.map((answer) => answer.status))}`,
        );
        const winner = bodies[answers.findIndex((answer) => answer.status === 200)];
        assert.equal(answers.find((answer) => answer.status === 200)?.body, { name: winner?.name, tag: 'race' });
        assert.equal(await eventTypes(context, id), ['ReportCreated'], `round ${id}: one event in the stream`);
      }
    },
  );

  races('answers an identical retry of the winner with 200 and appends nothing', async (context) => {
    const id = 101;
    assert.is((await post(context.peer, { id, name: 'first', tag: 'retry' })).status, 200);
    const retry = await post(context.peer, { id, name: 'first', tag: 'retry' });
    assert.is(retry.status, 200);
    assert.equal(retry.body, { name: 'first', tag: 'retry' });
    assert.is(
      (await post(context.peer, { id, name: 'first' })).status,
      409,
      'the same name without the tag is another body',
    );
    assert.equal(await eventTypes(context, id), ['ReportCreated']);
  });

  races(`answers ${RACERS} racing identical creates with 200 each and appends one event`, async (context) => {
    const id = 201;
    const answers = await Promise.all(Array.from({ length: RACERS }, () => post(context.peer, { id, name: 'same' })));
    assert.equal(
      answers.map((answer) => answer.status),
      Array<number>(RACERS).fill(200),
    );
    assert.equal(answers[0]?.body, { name: 'same' });
    assert.equal(await eventTypes(context, id), ['ReportCreated']);
  });

  races('deletes a report once (204, then 404), and the id can be created again', async (context) => {
    const id = 301;
    assert.is((await post(context.peer, { id, name: 'gone soon' })).status, 200);
    assert.is(await del(context.peer, id), 204);
    assert.is(await del(context.peer, id), 404);
    assert.equal((await post(context.peer, { id, name: 'back' })).body, { name: 'back' });
    assert.equal(await eventTypes(context, id), ['ReportCreated', 'ReportDeleted', 'ReportCreated']);
  });
} else if (process.env['CI'] === 'true') {
  races('has PostgreSQL installed (CI=true requires it)', () => {
    assert.unreachable('no initdb/pg_ctl on the PATH or under /usr/lib/postgresql/*/bin: apt-get install postgresql');
  });
} else {
  process.stderr.write(
    `\n${'#'.repeat(78)}\n# SKIPPED: the Emmett peer's racing-writes suite. No initdb/pg_ctl on the PATH or\n` +
      `# under /usr/lib/postgresql/*/bin: apt-get install postgresql to run it.\n${'#'.repeat(78)}\n\n`,
  );
}

races.run();
