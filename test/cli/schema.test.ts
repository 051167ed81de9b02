// `reports schema events|openapi|asyncapi`: the events' JSON Schema (the same document the package
// ships as projections/events.schema.json), and the OpenAPI and AsyncAPI documents the server serves.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventsJsonSchema } from '../../projections/json-schema.js';
import { reports } from '../helpers/cli.js';
import { startTestServer } from '../helpers/server.js';

/** The shipped file, in the source tree (this test runs from dist/test/cli/). */
const SHIPPED_SCHEMA = fileURLToPath(new URL('../../../projections/events.schema.json', import.meta.url));

async function openApiServed(env: Record<string, string> = {}, path = '/openapi.json'): Promise<unknown> {
  const server = await startTestServer(env);
  try {
    const response = await server.request(path);
    assert.is(response.status, 200);
    return await response.json();
  } finally {
    await server.dispose();
  }
}

const schema = suite('reports schema');

schema('events prints the JSON Schema generated from the event definitions', async () => {
  const { code, stdout, stderr } = await reports(['schema', 'events']);
  assert.is(code, 0, stderr);
  assert.equal(JSON.parse(stdout), eventsJsonSchema());
});

schema('the shipped projections/events.schema.json is exactly what `schema events` prints', async () => {
  const { stdout } = await reports(['schema', 'events']);
  const shipped = await readFile(SHIPPED_SCHEMA, 'utf8');
  assert.ok(
    shipped === stdout,
    'projections/events.schema.json is stale: regenerate it with `node dist/src/cli/main.js schema events > projections/events.schema.json`',
  );
});

schema('openapi prints the document GET /openapi.json serves', async () => {
  const { code, stdout } = await reports(['schema', 'openapi']);
  assert.is(code, 0);
  assert.equal(JSON.parse(stdout), await openApiServed());
});

schema('openapi follows the configured limits, as the server does', async () => {
  const env = { REPORTS_NAME_MAX_CHARS: '17', REPORTS_TAG_MAX_CHARS: '5' };
  const { stdout } = await reports(['schema', 'openapi'], { env });
  const printed: unknown = JSON.parse(stdout);
  assert.equal(printed, await openApiServed(env));
  assert.not.equal(printed, JSON.parse((await reports(['schema', 'openapi'])).stdout));
});

schema('asyncapi prints the document GET /asyncapi.json serves', async () => {
  const { code, stdout } = await reports(['schema', 'asyncapi']);
  assert.is(code, 0);
  assert.equal(JSON.parse(stdout), await openApiServed({}, '/asyncapi.json'));
});

schema('asyncapi names the configured topic', async () => {
  const { code, stdout } = await reports(['schema', 'asyncapi'], {
    env: { KAFKA_BROKERS: '127.0.0.1:9', REPORTS_TOPIC: 'team.reports' },
  });
  assert.is(code, 0);
  const document = JSON.parse(stdout) as {
    channels: { reportEvents: { address: string; bindings: { kafka: { topic: string } } } };
  };
  assert.is(document.channels.reportEvents.address, 'team.reports');
  assert.is(document.channels.reportEvents.bindings.kafka.topic, 'team.reports');
});

schema('an unknown schema name exits 2 naming the known ones', async () => {
  const { code, stderr } = await reports(['schema', 'graphql']);
  assert.is(code, 2);
  assert.match(stderr, 'unknown schema "graphql": expected events, openapi or asyncapi');
  assert.match(stderr, /^usage: reports schema events\|openapi\|asyncapi$/m);
});

schema('a missing schema name exits 2', async () => {
  const { code, stderr } = await reports(['schema']);
  assert.is(code, 2);
  assert.match(stderr, 'reports schema: missing argument');
});

schema('a second schema name exits 2', async () => {
  const { code, stderr } = await reports(['schema', 'events', 'openapi']);
  assert.is(code, 2);
  assert.match(stderr, 'unexpected argument "openapi"');
});

schema.run();
