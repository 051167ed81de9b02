// DELETE and POST with If-Match (and If-None-Match): a version that is no longer the report's is
// 412 with an Error body and nothing written; a malformed header is 400; an absent report is 404 to
// a DELETE whatever the condition (RFC 9110 13.2.1); a retry with an Idempotency-Key gets its first answer.
import * as assert from 'uvu/assert';
import { deleteReport, logHead, postReport, reportBody, serverSuite, type StartServer } from '../requests.js';
import { expectError, expectNoContent, expectReport } from '../responses.js';
import type { TestServer } from '../../helpers/server.js';

function deleteIf(server: TestServer, id: string, headers: Record<string, string>): Promise<Response> {
  return server.request(`/reports/${id}`, { method: 'DELETE', headers });
}

function postIf(server: TestServer, id: string, name: string, headers: Record<string, string>): Promise<Response> {
  return server.request('/reports', { method: 'POST', json: reportBody(id, name), headers });
}

/** A report at version 3: created, deleted and created again (so "1" is a stale ETag of it). */
async function atVersionThree(server: TestServer, id: string, name: string): Promise<void> {
  await expectReport(await postReport(server, id, 'first'), { name: 'first' });
  await expectNoContent(await deleteReport(server, id));
  await expectReport(await postReport(server, id, name), { name });
}

export function conditionalWritesContract(logName: string, start: StartServer, nextId: () => string): void {
  const remove = serverSuite(`${logName}: DELETE /reports/{id} with If-Match`, start);

  remove('answers 204 and appends one record when If-Match names the current version', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'current'), { name: 'current' });
    const before = await logHead(server);
    await expectNoContent(await deleteIf(server, id, { 'If-Match': '"1"' }));
    assert.is(await logHead(server), before + 1);
    assert.not.ok(server.projector.model.reports.has(id));
  });

  remove(
    'answers 412 naming If-Match when it names a stale version, writing nothing and keeping the report',
    async ({ server }) => {
      const id = nextId();
      await atVersionThree(server, id, 'kept');
      const before = await logHead(server);
      await expectError(await deleteIf(server, id, { 'If-Match': '"1"' }), 412, /If-Match/);
      assert.is(await logHead(server), before);
      assert.ok(server.projector.model.reports.has(id));
      await expectNoContent(await deleteIf(server, id, { 'If-Match': '"1", "3"' }));
    },
  );

  remove('compares If-Match strongly: W/"1" is 412 for a report at "1"', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'weak'), { name: 'weak' });
    await expectError(await deleteIf(server, id, { 'If-Match': 'W/"1"' }), 412, /If-Match/);
    assert.ok(server.projector.model.reports.has(id));
  });

  remove(
    'takes If-Match: * as "the report exists": 204 for a live report, 404 for an absent one',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'any'), { name: 'any' });
      await expectNoContent(await deleteIf(server, id, { 'If-Match': '*' }));
      await expectError(await deleteIf(server, id, { 'If-Match': '*' }), 404, new RegExp(id));
    },
  );

  remove('answers 404, not 412, to If-Match for a report that does not exist (RFC 9110 13.2.1)', async ({ server }) => {
    const id = nextId();
    await expectError(await deleteIf(server, id, { 'If-Match': '"1"' }), 404, new RegExp(id));
  });

  remove('answers 412 to If-None-Match naming the current version or "*", writing nothing', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'none match'), { name: 'none match' });
    const before = await logHead(server);
    await expectError(await deleteIf(server, id, { 'If-None-Match': '"1"' }), 412, /If-None-Match/);
    await expectError(await deleteIf(server, id, { 'If-None-Match': '*' }), 412, /If-None-Match/);
    assert.is(await logHead(server), before);
    await expectNoContent(await deleteIf(server, id, { 'If-None-Match': '"2"' }));
  });

  for (const value of ['1', '"1', '', 'W/1', '"1";"2"', '**']) {
    remove(
      `returns 400 naming If-Match for the malformed value ${JSON.stringify(value)}, writing nothing`,
      async ({ server }) => {
        const id = nextId();
        await expectReport(await postReport(server, id, 'malformed'), { name: 'malformed' });
        const before = await logHead(server);
        await expectError(await deleteIf(server, id, { 'If-Match': value }), 400, /If-Match/);
        assert.is(await logHead(server), before);
      },
    );
  }

  remove(
    'gives a retry with the Idempotency-Key its first answer (204) though its If-Match is stale by then',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'keyed'), { name: 'keyed' });
      const headers = { 'If-Match': '"1"', 'Idempotency-Key': `conditional-${id}` };
      await expectNoContent(await deleteIf(server, id, headers));
      const before = await logHead(server);
      await expectNoContent(await deleteIf(server, id, headers));
      assert.is(await logHead(server), before);
    },
  );

  remove(
    'records no Idempotency-Key for a 412: the key stays free for the request that succeeds',
    async ({ server }) => {
      const id = nextId();
      await atVersionThree(server, id, 'keyed');
      const key = `after-412-${id}`;
      await expectError(await deleteIf(server, id, { 'If-Match': '"1"', 'Idempotency-Key': key }), 412);
      assert.not.ok(server.projector.model.keys.has(key));
      await expectError(await deleteIf(server, id, { 'If-Match': '"1"', 'Idempotency-Key': key }), 412);
      await expectNoContent(await deleteIf(server, id, { 'If-Match': '"3"', 'Idempotency-Key': key }));
    },
  );

  remove.run();

  const create = serverSuite(`${logName}: POST /reports with If-Match and If-None-Match`, start);

  create(
    'answers as without it when If-Match names the current version: 200 for the same body, 409 for another',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'same'), { name: 'same' });
      const before = await logHead(server);
      await expectReport(await postIf(server, id, 'same', { 'If-Match': '"1"' }), { name: 'same' });
      await expectError(await postIf(server, id, 'other', { 'If-Match': '"1"' }), 409);
      assert.is(await logHead(server), before);
    },
  );

  create('answers 412, not 409 or 200, when If-Match names a stale version, writing nothing', async ({ server }) => {
    const id = nextId();
    await atVersionThree(server, id, 'third');
    const before = await logHead(server);
    await expectError(await postIf(server, id, 'third', { 'If-Match': '"1"' }), 412, /If-Match/);
    await expectError(await postIf(server, id, 'other', { 'If-Match': '"1"' }), 412, /If-Match/);
    assert.is(await logHead(server), before);
  });

  create(
    'answers 412 to If-Match for an absent report and creates nothing (If-Match needs a current report)',
    async ({ server }) => {
      const id = nextId();
      const before = await logHead(server);
      await expectError(await postIf(server, id, 'never', { 'If-Match': '*' }), 412, /If-Match/);
      await expectError(await postIf(server, id, 'never', { 'If-Match': '"1"' }), 412, /If-Match/);
      assert.is(await logHead(server), before);
      assert.not.ok(server.projector.model.reports.has(id));
    },
  );

  create(
    'creates an absent report with If-None-Match: *, and answers 412 for an existing one whatever its body',
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postIf(server, id, 'only once', { 'If-None-Match': '*' }), { name: 'only once' });
      const before = await logHead(server);
      await expectError(await postIf(server, id, 'only once', { 'If-None-Match': '*' }), 412, /If-None-Match/);
      await expectError(await postIf(server, id, 'other', { 'If-None-Match': '*' }), 412, /If-None-Match/);
      assert.is(await logHead(server), before);
    },
  );

  create('returns 400 naming If-Match for a malformed one, after the body is checked', async ({ server }) => {
    const id = nextId();
    await expectError(await postIf(server, id, 'malformed', { 'If-Match': 'abc' }), 400, /If-Match/);
    await expectError(
      await server.request('/reports', {
        method: 'POST',
        json: '{"id": 1.5, "name": "x"}',
        headers: { 'If-Match': 'abc' },
      }),
      400,
      /\bid\b/,
    );
  });

  create.run();
}
