// GET (and HEAD) /reports/{id}: the Report from the projected state with its version as a strong
// ETag; 404 for absent or deleted reports, 400 for ids that are not a decimal int64; If-None-Match
// answers 304; a live report whose key is missing answers 500 naming the problem.
import * as assert from 'uvu/assert';
import { isSealedReport } from '../../../projections/reports.js';
import { parseKeyId } from '../../../src/keys/key-store.js';
import { claim, deleteReport, logHead, postReport, serverSuite, type StartServer } from '../requests.js';
import { expectError, expectJson, expectNoContent, expectReport, expectStatus, JSON_TYPE } from '../responses.js';
import type { TestServer } from '../../helpers/server.js';

export function getReport(
  server: TestServer,
  id: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Response> {
  return server.request(`/reports/${id}`, { method, headers });
}

/** The counter `reports_content_unopened_total` of /metrics. */
async function unopenedCount(server: TestServer): Promise<number> {
  const text = await (await server.request('/metrics', { token: null })).text();
  return Number(/^reports_content_unopened_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
}

export function getReportContract(logName: string, start: StartServer, nextId: () => string): void {
  const read = serverSuite(`${logName}: GET /reports/{id}`, start);

  read(
    'answers 200 with the Report, its version as a strong ETag, and a Cache-Control that keeps it out of shared caches',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'Q3 revenue', 'finance'), { name: 'Q3 revenue', tag: 'finance' });
      const response = await getReport(server, id);
      assert.is(response.headers.get('etag'), '"1"');
      assert.is(response.headers.get('cache-control'), 'private, no-cache');
      await expectReport(response, { name: 'Q3 revenue', tag: 'finance' });
    },
  );

  read('leaves an absent tag absent (never null)', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'untagged'), { name: 'untagged' });
    await expectReport(await getReport(server, id), { name: 'untagged' });
  });

  read('keeps an int64 id exact and reads the path id as a decimal: 007 is 7', async ({ server }) => {
    await claim(server, '9007199254740993');
    await expectReport(await postReport(server, '9007199254740993', 'exact'), { name: 'exact' });
    await expectReport(await getReport(server, '9007199254740993'), { name: 'exact' });
    await expectStatus(await getReport(server, '9007199254740992'), 404);
    await claim(server, '7');
    await expectReport(await postReport(server, '7', 'padded'), { name: 'padded' });
    await expectReport(await getReport(server, '007'), { name: 'padded' });
  });

  read('answers 404 naming the id for a report never created, and for a deleted one', async ({ server }) => {
    const id = nextId();
    await expectError(await getReport(server, id), 404, new RegExp(`report ${id} does not exist`));
    await expectReport(await postReport(server, id, 'doomed'), { name: 'doomed' });
    await expectNoContent(await deleteReport(server, id));
    const response = await getReport(server, id);
    assert.is(response.headers.get('etag'), null);
    await expectError(response, 404, new RegExp(id));
  });

  read('gives a report created again after a delete a new ETag, "3", and its new content', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'before', 'a'), { name: 'before', tag: 'a' });
    await expectNoContent(await deleteReport(server, id));
    await expectReport(await postReport(server, id, 'after'), { name: 'after' });
    const response = await getReport(server, id);
    assert.is(response.headers.get('etag'), '"3"');
    await expectReport(response, { name: 'after' });
  });

  for (const raw of [
    'abc',
    '1.5',
    '+5',
    '1e3',
    '0x10',
    '9223372036854775808',
    '-9223372036854775809',
    '99999999999999999999',
  ]) {
    read(`returns 400 naming the id for GET /reports/${raw}`, async ({ server }) => {
      await expectError(await getReport(server, raw), 400, /\bid\b/);
    });
  }

  read('answers 401 without a token, before the id is looked at', async ({ server }) => {
    const response = await server.request('/reports/abc', { token: null });
    await expectError(response, 401, /Authorization/);
  });

  read('writes nothing to the log', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'read only'), { name: 'read only' });
    const before = await logHead(server);
    await expectReport(await getReport(server, id), { name: 'read only' });
    await expectStatus(await getReport(server, nextId()), 404);
    assert.is(await logHead(server), before);
  });

  read(
    'answers HEAD with the status and headers of GET (ETag, Content-Type, Content-Length) and no body',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'headless', 'x'), { name: 'headless', tag: 'x' });
      const got = await getReport(server, id);
      const body = await got.text();
      const head = await getReport(server, id, {}, 'HEAD');
      assert.is(head.status, 200);
      assert.is(head.headers.get('etag'), '"1"');
      assert.is(head.headers.get('content-type'), JSON_TYPE);
      assert.is(head.headers.get('content-length'), String(Buffer.byteLength(body)));
      assert.is(head.headers.get('cache-control'), got.headers.get('cache-control'));
      assert.is(await head.text(), '');
      const absent = await getReport(server, nextId(), {}, 'HEAD');
      assert.is(absent.status, 404);
      assert.is(await absent.text(), '');
    },
  );

  read(
    'answers 500 naming the missing key for a live report whose key is gone, and counts it in reports_content_unopened_total',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'keyless'), { name: 'keyless' });
      const report = server.projector.model.reports.get(id);
      assert.ok(report !== undefined && isSealedReport(report));
      // A lost key: what a foreign producer's event, or a damaged key store, leaves.
      await server.keys.destroy([parseKeyId(report.sealed.key)]);
      const before = await unopenedCount(server);
      const response = await getReport(server, id);
      assert.is(response.headers.get('etag'), null);
      await expectError(response, 500, new RegExp(`report ${id} cannot be opened: its key is missing`));
      assert.is(await unopenedCount(server), before + 1);
      // The report is live all the same: a delete ends it, and it is then 404.
      await expectNoContent(await deleteReport(server, id));
      await expectError(await getReport(server, id), 404);
    },
  );

  read(
    'answers reads racing with deletes 200 with the report or 404, never 500, counting no missing key',
    async ({ server }) => {
      const ids = Array.from({ length: 30 }, () => nextId());
      for (const id of ids) await expectReport(await postReport(server, id, `racing ${id}`), { name: `racing ${id}` });
      const before = await unopenedCount(server);
      const statuses = await Promise.all(
        ids.flatMap((id) => [
          deleteReport(server, id).then(
            async (response) => (await response.arrayBuffer(), `DELETE ${response.status}`),
          ),
          ...Array.from({ length: 4 }, () =>
            getReport(server, id).then(async (response) => {
              const body = (await response.json()) as { name?: string };
              return response.status === 200 && body.name !== `racing ${id}`
                ? 'GET 200 with another body'
                : `GET ${response.status}`;
            }),
          ),
        ]),
      );
      assert.equal(
        [...new Set(statuses)].filter((status) => !['DELETE 204', 'GET 200', 'GET 404'].includes(status)),
        [],
      );
      assert.is(await unopenedCount(server), before);
    },
  );

  read.run();

  const cached = serverSuite(`${logName}: GET /reports/{id} with If-None-Match and If-Match`, start);

  cached('answers 304 with the ETag and no body when If-None-Match names the current version', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'cached'), { name: 'cached' });
    const response = await getReport(server, id, { 'If-None-Match': '"1"' });
    assert.is(response.status, 304);
    assert.is(response.headers.get('etag'), '"1"');
    assert.is(response.headers.get('cache-control'), 'private, no-cache');
    assert.is(await response.text(), '');
  });

  cached(
    'compares If-None-Match weakly and takes lists and "*" (RFC 9110): W/"1", "7", "1" and * are 304',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'weak'), { name: 'weak' });
      for (const header of ['W/"1"', '"7", "1"', '*', ' , "1" ,']) {
        const response = await getReport(server, id, { 'If-None-Match': header });
        assert.is(response.status, 304, header);
        await response.arrayBuffer();
      }
    },
  );

  cached(
    'answers 200 with the report and its new ETag when If-None-Match names a stale version',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'old'), { name: 'old' });
      await expectNoContent(await deleteReport(server, id));
      await expectReport(await postReport(server, id, 'new'), { name: 'new' });
      const response = await getReport(server, id, { 'If-None-Match': '"1"' });
      assert.is(response.headers.get('etag'), '"3"');
      await expectReport(response, { name: 'new' });
    },
  );

  cached(
    'answers 404 to If-None-Match for a deleted report (a 304 would keep the erased content current)',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'gone'), { name: 'gone' });
      await expectNoContent(await deleteReport(server, id));
      await expectError(await getReport(server, id, { 'If-None-Match': '"1"' }), 404);
      await expectError(await getReport(server, id, { 'If-None-Match': '*' }), 404);
    },
  );

  cached(
    'answers 412 to an If-Match that names another version, and 200 to one that names this one',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'matched'), { name: 'matched' });
      await expectError(await getReport(server, id, { 'If-Match': '"2"' }), 412, /If-Match/);
      await expectError(await getReport(server, id, { 'If-Match': 'W/"1"' }), 412, /If-Match/);
      await expectReport(await getReport(server, id, { 'If-Match': '"1"' }), { name: 'matched' });
    },
  );

  for (const [name, value] of [
    ['If-None-Match', '1'],
    ['If-None-Match', '"1'],
    ['If-None-Match', ''],
    ['If-Match', 'abc'],
    ['If-None-Match', '"1" "2"'],
    ['If-Match', '*, "1"'],
  ] as const) {
    cached(`returns 400 naming ${name} for the malformed value ${JSON.stringify(value)}`, async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'malformed'), { name: 'malformed' });
      await expectError(await getReport(server, id, { [name]: value }), 400, new RegExp(name));
    });
  }

  cached(
    'answers HEAD with conditions as GET, without a body: 304 with the ETag, 412, 400, and 404 once deleted',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'head first'), { name: 'head first' });
      for (const [headers, status] of [
        [{ 'If-None-Match': '"1"' }, 304],
        [{ 'If-Match': '"2"' }, 412],
        [{ 'If-Match': 'abc' }, 400],
        [{ 'If-None-Match': '"2"' }, 200],
      ] as const) {
        const got = await getReport(server, id, headers);
        const gotBody = await got.text();
        const head = await getReport(server, id, headers, 'HEAD');
        assert.is(head.status, status, JSON.stringify(headers));
        assert.is(got.status, status, JSON.stringify(headers));
        for (const name of ['etag', 'cache-control', 'content-type'])
          assert.is(head.headers.get(name), got.headers.get(name), `${name} for ${JSON.stringify(headers)}`);
        if (status !== 304)
          assert.is(head.headers.get('content-length'), String(Buffer.byteLength(gotBody)), JSON.stringify(headers));
        assert.is(await head.text(), '');
      }
      await expectNoContent(await deleteReport(server, id));
      const gone = await getReport(server, id, { 'If-None-Match': '"1"' }, 'HEAD');
      assert.is(gone.status, 404);
      assert.is(gone.headers.get('etag'), null);
      assert.is(await gone.text(), '');
    },
  );

  cached('answers a 304 from the version alone, with the report live but its key gone', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'version only'), { name: 'version only' });
    const report = server.projector.model.reports.get(id);
    assert.ok(report !== undefined && isSealedReport(report));
    await server.keys.destroy([parseKeyId(report.sealed.key)]);
    const response = await getReport(server, id, { 'If-None-Match': '"1"' });
    assert.is(response.status, 304);
    await response.arrayBuffer();
    await expectJson(await getReport(server, id), 500);
  });

  cached.run();
}
