// GET /openapi.json: served without a token, clean under Redocly's `recommended` ruleset, and
// listing every status the service answers, with the schemas that validate requests.
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import * as assert from 'uvu/assert';
import { createOpenApiDocument } from '../../src/http/openapi.js';
import { SERVICE_VERSION } from '../../src/version.js';
import { startTestServer } from '../helpers/server.js';
import { serverSuite } from './requests.js';
import { expectJson } from './responses.js';

/** The value at `path` inside a parsed JSON document, or undefined. */
function at(document: unknown, ...path: string[]): unknown {
  let node = document;
  for (const key of path)
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

async function lint(document: unknown): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  return lintFromString({ source: JSON.stringify(document, null, 2), absoluteRef: 'openapi.json', config });
}

const describe = (problems: NormalizedProblem[]) =>
  problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`).join('\n');

const openapi = serverSuite('GET /openapi.json', (env) => startTestServer(env), {
  REPORTS_NAME_MAX_CHARS: '10',
  REPORTS_TAG_MAX_CHARS: '20',
});
const fetchDocument = async (request: () => Promise<Response>) => expectJson(await request(), 200);

openapi('is served as JSON without a token', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json', { token: null }));
  assert.is(at(document, 'openapi'), '3.1.0');
});

openapi('has no errors under the recommended Redocly ruleset', async ({ server }) => {
  const problems = await lint(await fetchDocument(() => server.request('/openapi.json')));
  const errors = problems.filter((p) => p.severity === 'error');
  assert.is(errors.length, 0, describe(errors));
});

openapi('has no warnings under the recommended Redocly ruleset', async ({ server }) => {
  const problems = await lint(await fetchDocument(() => server.request('/openapi.json')));
  const warnings = problems.filter((p) => p.severity === 'warn');
  assert.is(warnings.length, 0, describe(warnings));
});

openapi(
  'has no errors or warnings under the recommended Redocly ruleset with /metrics behind REPORTS_METRICS_TOKEN',
  async () => {
    const problems = await lint(
      createOpenApiDocument({ nameMaxChars: 10, tagMaxChars: 20 }, SERVICE_VERSION, { metricsToken: true }),
    );
    assert.is(problems.filter((p) => p.severity === 'error' || p.severity === 'warn').length, 0, describe(problems));
  },
);

openapi('would fail the lint if the document were broken (the linter is live)', async ({ server }) => {
  const document = (await fetchDocument(() => server.request('/openapi.json'))) as Record<string, unknown>;
  const problems = await lint({ ...document, info: undefined, paths: { '/reports': { post: { responses: {} } } } });
  assert.ok(
    problems.some((p) => p.severity === 'error'),
    describe(problems),
  );
});

openapi('lists every status of POST /reports', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  const statuses = Object.keys(at(document, 'paths', '/reports', 'post', 'responses') as object).sort();
  assert.equal(statuses, ['200', '400', '401', '403', '405', '409', '412', '413', '415', '422', '503']);
});

openapi('lists every status of DELETE /reports/{id}', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  const statuses = Object.keys(at(document, 'paths', '/reports/{id}', 'delete', 'responses') as object).sort();
  assert.equal(statuses, ['204', '400', '401', '403', '404', '405', '412', '422', '503']);
});

openapi('lists every status of GET and HEAD /reports/{id}', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  for (const method of ['get', 'head']) {
    const statuses = Object.keys(at(document, 'paths', '/reports/{id}', method, 'responses') as object).sort();
    assert.equal(statuses, ['200', '304', '400', '401', '403', '404', '405', '412', '500', '503'], method);
  }
  assert.equal(
    at(document, 'paths', '/reports/{id}', 'get', 'responses', '200', 'content', 'application/json', 'schema'),
    { $ref: '#/components/schemas/Report' },
  );
  assert.is(
    at(document, 'paths', '/reports/{id}', 'head', 'responses', '200', 'content'),
    undefined,
    'a HEAD answer has no body',
  );
});

openapi(
  'documents ETag on reads, If-Match on every report operation and If-None-Match with the pattern the server parses',
  async ({ server }) => {
    const document = await fetchDocument(() => server.request('/openapi.json'));
    for (const method of ['get', 'head']) {
      for (const status of ['200', '304'])
        assert.ok(
          at(document, 'paths', '/reports/{id}', method, 'responses', status, 'headers', 'ETag'),
          `${method} ${status}`,
        );
    }
    for (const [path, method] of [
      ['/reports', 'post'],
      ['/reports/{id}', 'delete'],
      ['/reports/{id}', 'get'],
      ['/reports/{id}', 'head'],
    ] as const) {
      const parameters = at(document, 'paths', path, method, 'parameters') as {
        name: string;
        in: string;
        schema: { pattern: string };
      }[];
      for (const name of ['If-Match', 'If-None-Match']) {
        const parameter = parameters.find((p) => p.name === name);
        assert.is(parameter?.in, 'header', `${method} ${path} ${name}`);
        const pattern = new RegExp(parameter?.schema.pattern ?? '');
        for (const value of ['*', '"1"', 'W/"3", "5"']) assert.ok(pattern.test(value), value);
        for (const value of ['1', '', '"1" "2"']) assert.not.ok(pattern.test(value), value);
      }
    }
  },
);

openapi('documents the WWW-Authenticate (401 and 403), Allow and Retry-After headers', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  for (const operation of [
    ['/reports', 'post'],
    ['/reports/{id}', 'delete'],
    ['/reports/{id}', 'get'],
    ['/reports/{id}', 'head'],
  ] as const) {
    const responses = ['paths', ...operation, 'responses'];
    assert.ok(at(document, ...responses, '401', 'headers', 'WWW-Authenticate'));
    assert.ok(at(document, ...responses, '403', 'headers', 'WWW-Authenticate'));
    assert.ok(at(document, ...responses, '405', 'headers', 'Allow'));
    assert.ok(at(document, ...responses, '503', 'headers', 'Retry-After'));
  }
});

openapi(
  'names the scope each report operation needs: read for GET and HEAD, write for POST and DELETE, in its description and its 403 challenge',
  async ({ server }) => {
    const document = await fetchDocument(() => server.request('/openapi.json'));
    for (const [path, method, scope] of [
      ['/reports', 'post', 'write'],
      ['/reports/{id}', 'delete', 'write'],
      ['/reports/{id}', 'get', 'read'],
      ['/reports/{id}', 'head', 'read'],
    ] as const) {
      assert.match(
        String(at(document, 'paths', path, method, 'description')),
        `Needs a token with the scope ${scope}.`,
        `${method} ${path}`,
      );
      assert.match(
        String(at(document, 'paths', path, method, 'responses', '403', 'headers', 'WWW-Authenticate', 'description')),
        `error="insufficient_scope", scope="${scope}"`,
        `${method} ${path}`,
      );
    }
    assert.is(
      at(document, 'paths', '/reports/{id}', 'head', 'responses', '403', 'content'),
      undefined,
      'a HEAD answer has no body',
    );
  },
);

openapi('requires bearer auth on every report operation and none on the operational routes', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  assert.is(at(document, 'components', 'securitySchemes', 'bearerAuth', 'type'), 'http');
  assert.is(at(document, 'components', 'securitySchemes', 'bearerAuth', 'scheme'), 'bearer');
  assert.equal(at(document, 'security'), [{ bearerAuth: [] }]);
  assert.is(at(document, 'paths', '/reports', 'post', 'security'), undefined);
  for (const method of ['get', 'head', 'delete'])
    assert.is(at(document, 'paths', '/reports/{id}', method, 'security'), undefined);
  for (const path of ['/openapi.json', '/asyncapi.json', '/healthz', '/readyz', '/metrics'])
    assert.equal(at(document, 'paths', path, 'get', 'security'), [], path);
});

openapi('declares NewReport.id as integer int64 and requires id and name', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  const newReport = at(document, 'components', 'schemas', 'NewReport');
  assert.equal(at(newReport, 'properties', 'id', 'type'), 'integer');
  assert.equal(at(newReport, 'properties', 'id', 'format'), 'int64');
  assert.equal(at(newReport, 'required'), ['id', 'name']);
});

openapi('takes the name and tag limits from the schemas that validate requests', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  assert.is(at(document, 'components', 'schemas', 'NewReport', 'properties', 'name', 'maxLength'), 10);
  assert.is(at(document, 'components', 'schemas', 'NewReport', 'properties', 'tag', 'maxLength'), 20);
});

openapi('gives Report a name and an optional tag but no id', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  const report = at(document, 'components', 'schemas', 'Report');
  assert.equal(Object.keys(at(report, 'properties') as object).sort(), ['name', 'tag']);
  assert.equal(at(report, 'required'), ['name']);
  assert.equal(at(document, 'paths', '/reports', 'post', 'responses', '200', 'content', 'application/json', 'schema'), {
    $ref: '#/components/schemas/Report',
  });
});

openapi('gives Error an int32 error and a message, both required', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json'));
  const error = at(document, 'components', 'schemas', 'Error');
  assert.is(at(error, 'properties', 'error', 'type'), 'integer');
  assert.is(at(error, 'properties', 'error', 'format'), 'int32');
  assert.is(at(error, 'properties', 'message', 'type'), 'string');
  assert.equal(at(error, 'required'), ['error', 'message']);
});

openapi(
  'admits in the path id pattern exactly the ids the server accepts, up to the int64 bounds',
  async ({ server }) => {
    const document = await fetchDocument(() => server.request('/openapi.json', { token: null }));
    const parameters = at(document, 'paths', '/reports/{id}', 'delete', 'parameters') as {
      name: string;
      schema: { pattern: string };
    }[];
    const pattern = new RegExp(parameters.find((p) => p.name === 'id')?.schema.pattern ?? '');
    const admitted = [
      '0',
      '-0',
      '007',
      '9223372036854775807',
      '-9223372036854775808',
      '0922337203685477580',
      '9223372036854775799',
    ];
    const refused = [
      '9223372036854775808',
      '-9223372036854775809',
      '9999999999999999999',
      '9300000000000000000',
      '00000000000000000001',
      '+5',
      '1e3',
      '',
    ];
    for (const id of admitted) assert.ok(pattern.test(id), `the pattern refuses ${id}`);
    for (const id of refused) assert.not.ok(pattern.test(id), `the pattern admits ${id}`);
    for (const id of [...admitted.slice(0, 6), ...refused.slice(0, 5)]) {
      const response = await server.request(`/reports/${id}`, { method: 'DELETE' });
      await response.arrayBuffer();
      assert.is(response.status === 400, !pattern.test(id), `server answered ${response.status} for ${id}`);
    }
  },
);

openapi('gives name and tag the maxLength the server enforces, from the configuration', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json', { token: null }));
  assert.is(at(document, 'components', 'schemas', 'NewReport', 'properties', 'name', 'maxLength'), 10);
  assert.is(at(document, 'components', 'schemas', 'NewReport', 'properties', 'tag', 'maxLength'), 20);
});

openapi(
  'counts maxLength as JSON Schema does, in characters (code points): 10 emoji are a name of 10, 11 are refused',
  async ({ server }) => {
    // Each emoji is two UTF-16 units: counted as JavaScript counts length, 6 were already too many.
    const created = await server.request('/reports', {
      method: 'POST',
      json: { id: 101, name: '😀'.repeat(10), tag: '😀'.repeat(20) },
    });
    assert.equal(await expectJson(created, 200), { name: '😀'.repeat(10), tag: '😀'.repeat(20) });
    const refused = await server.request('/reports', { method: 'POST', json: { id: 102, name: '😀'.repeat(11) } });
    assert.equal(await expectJson(refused, 400), { error: 400, message: 'name must be at most 10 characters' });
  },
);

openapi('names its server relative to where it was fetched, not a fixed address', async ({ server }) => {
  const document = await fetchDocument(() => server.request('/openapi.json', { token: null }));
  const servers = at(document, 'servers') as { url: string }[];
  assert.equal(
    servers.map((s) => s.url),
    ['/'],
  );
  // What a client does with it: resolve it against the document's own address, which is this server.
  const base = new URL(servers[0]?.url ?? '', `${server.url}/openapi.json`);
  const response = await fetch(new URL('healthz', base));
  assert.is(response.status, 200);
  await response.arrayBuffer();
});

openapi.run();
