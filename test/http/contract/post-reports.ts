// POST /reports: creation, retries, conflicts and the field rules (README, "Using it").
import * as assert from 'uvu/assert';
import {
  claim,
  deleteReport,
  logHead,
  postJson,
  postReport,
  reportBody,
  serverSuite,
  type StartServer,
} from '../requests.js';
import { expectError, expectNoContent, expectReport } from '../responses.js';
import { openedReport } from '../../helpers/opened.js';

export function postReportsContract(logName: string, start: StartServer, nextId: () => string): void {
  const create = serverSuite(`${logName}: POST /reports`, start);

  create('answers 200 with {name} and no id for a new id', async ({ server }) => {
    await expectReport(await postReport(server, nextId(), 'first report'), { name: 'first report' });
  });

  create('answers the tag when one is given', async ({ server }) => {
    await expectReport(await postReport(server, nextId(), 'tagged', 'monthly'), { name: 'tagged', tag: 'monthly' });
  });

  create('appends one record and projects the report before answering', async ({ server }) => {
    const id = nextId();
    const before = await logHead(server);
    await expectReport(await postReport(server, id, 'projected', 't'), { name: 'projected', tag: 't' });
    assert.is(await logHead(server), before + 1);
    assert.equal(await openedReport(server.projector.model.reports, server.keys, id), { name: 'projected', tag: 't' });
  });

  create('treats a null tag as absent', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'no tag', null), { name: 'no tag' });
    await expectReport(await postReport(server, id, 'no tag'), { name: 'no tag' });
  });

  create('ignores unknown properties and does not echo them', async ({ server }) => {
    const id = nextId();
    await expectReport(await postJson(server, reportBody(id, 'extra', 'x', { colour: 'red', nested: { id: 5 } })), {
      name: 'extra',
      tag: 'x',
    });
    const before = await logHead(server);
    await expectReport(await postReport(server, id, 'extra', 'x'), { name: 'extra', tag: 'x' });
    assert.is(await logHead(server), before, 'the retry without the unknown properties must be the same report');
  });

  create('answers an identical retry with 200 and the existing report, appending nothing', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'retried', 'r'), { name: 'retried', tag: 'r' });
    const before = await logHead(server);
    await expectReport(await postReport(server, id, 'retried', 'r'), { name: 'retried', tag: 'r' });
    assert.is(await logHead(server), before);
  });

  create('returns 409 when the id exists with another name, appending nothing', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'one'), { name: 'one' });
    const before = await logHead(server);
    await expectError(await postReport(server, id, 'two'), 409, new RegExp(id));
    assert.is(await logHead(server), before);
    assert.equal(await openedReport(server.projector.model.reports, server.keys, id), { name: 'one' });
  });

  create('returns 409 when the id exists with another tag', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'same', 'a'), { name: 'same', tag: 'a' });
    await expectError(await postReport(server, id, 'same', 'b'), 409, new RegExp(id));
  });

  create('returns 409 when the id exists without a tag and the retry has one', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'same'), { name: 'same' });
    await expectError(await postReport(server, id, 'same', 'a'), 409);
  });

  create('returns 409 when the id exists with a tag and the retry has none', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'same', 'a'), { name: 'same', tag: 'a' });
    await expectError(await postReport(server, id, 'same'), 409);
  });

  create('accepts an empty name', async ({ server }) => {
    await expectReport(await postReport(server, nextId(), ''), { name: '' });
  });

  create('returns 400 naming name when name is missing', async ({ server }) => {
    await expectError(await postJson(server, `{"id":${nextId()}}`), 400, /\bname\b/);
  });

  create('returns 400 naming name when name is a number', async ({ server }) => {
    await expectError(await postJson(server, `{"id":${nextId()},"name":5}`), 400, /\bname\b/);
  });

  create('returns 400 naming name when name is null', async ({ server }) => {
    await expectError(await postJson(server, `{"id":${nextId()},"name":null}`), 400, /\bname\b/);
  });

  create('returns 400 naming tag when tag is a number', async ({ server }) => {
    await expectError(await postJson(server, `{"id":${nextId()},"name":"n","tag":5}`), 400, /\btag\b/);
  });

  create('accepts Content-Type application/json; charset=utf-8', async ({ server }) => {
    const response = await postJson(server, reportBody(nextId(), 'charset'), {
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    await expectReport(response, { name: 'charset' });
  });

  create('returns 415 naming Content-Type for text/plain', async ({ server }) => {
    const response = await postJson(server, reportBody(nextId(), 'plain'), {
      headers: { 'Content-Type': 'text/plain' },
    });
    await expectError(response, 415, /Content-Type/);
  });

  create('returns 415 naming Content-Type when the header is missing', async ({ server }) => {
    // A byte body makes fetch send no Content-Type at all (a string body would get text/plain).
    const body = new TextEncoder().encode(reportBody(nextId(), 'untyped'));
    await expectError(await server.request('/reports', { method: 'POST', body }), 415, /Content-Type/);
  });

  const notJsonObjects: ReadonlyArray<[label: string, body: string]> = [
    ['a body that is not JSON', '{"id": 1, "name": '],
    ['an empty body', ''],
    ['an array body', '[{"id": 1, "name": "n"}]'],
    ['a string body', '"report"'],
    ['a null body', 'null'],
    ['a number body', '1'],
  ];
  for (const [label, body] of notJsonObjects) {
    create(`returns 400 naming the body for ${label}`, async ({ server }) => {
      await expectError(await postJson(server, body), 400, /body/);
    });
  }

  create.run();

  const ids = serverSuite(`${logName}: POST /reports id`, start);

  ids('keeps 9007199254740993 and 9007199254740992 apart (no float rounding)', async ({ server }) => {
    const [odd, even] = ['9007199254740993', '9007199254740992'];
    await claim(server, odd);
    await claim(server, even);
    await expectReport(await postReport(server, odd, 'odd'), { name: 'odd' });
    await expectReport(await postReport(server, even, 'even'), { name: 'even' });
    await expectReport(await postReport(server, odd, 'odd'), { name: 'odd' });
    await expectReport(await postReport(server, even, 'even'), { name: 'even' });
    await expectError(await postReport(server, odd, 'even'), 409);
    await expectError(await postReport(server, even, 'odd'), 409);
    assert.equal(await openedReport(server.projector.model.reports, server.keys, odd), { name: 'odd' });
  });

  for (const bound of ['-9223372036854775808', '9223372036854775807']) {
    ids(`accepts the int64 bound ${bound}`, async ({ server }) => {
      await claim(server, bound);
      await expectReport(await postReport(server, bound, 'bound'), { name: 'bound' });
      assert.equal(await openedReport(server.projector.model.reports, server.keys, bound), { name: 'bound' });
      await expectNoContent(await deleteReport(server, bound));
    });
  }

  ids('counts 1.0 as the id 1', async ({ server }) => {
    await claim(server, '1');
    await expectReport(await postReport(server, '1.0', 'one point zero'), { name: 'one point zero' });
    await expectNoContent(await deleteReport(server, '1'));
  });

  const badIds = ['9223372036854775808', '-9223372036854775809', '1.5', '"1"', '1e400', 'true', 'null', '{}', '[1]'];
  for (const literal of badIds) {
    ids(`returns 400 naming id for the id ${literal}`, async ({ server }) => {
      await expectError(await postReport(server, literal, 'bad id'), 400, /\bid\b/);
    });
  }

  ids('returns 400 naming id when id is missing', async ({ server }) => {
    await expectError(await postJson(server, '{"name":"no id"}'), 400, /\bid\b/);
  });

  ids.run();

  const limits = serverSuite(`${logName}: POST /reports limits`, start, {
    REPORTS_NAME_MAX_CHARS: '10',
    REPORTS_TAG_MAX_CHARS: '10',
    REPORTS_BODY_LIMIT: '1kb',
  });

  limits('accepts a name of exactly the limit, counted in characters', async ({ server }) => {
    await expectReport(await postReport(server, nextId(), 'é'.repeat(10)), { name: 'é'.repeat(10) });
  });

  limits('returns 400 naming name for a name one over the limit', async ({ server }) => {
    await expectError(await postReport(server, nextId(), 'n'.repeat(11)), 400, /\bname\b/);
  });

  limits('accepts a tag of exactly the limit', async ({ server }) => {
    await expectReport(await postReport(server, nextId(), 'n', 't'.repeat(10)), { name: 'n', tag: 't'.repeat(10) });
  });

  limits('returns 400 naming tag for a tag one over the limit', async ({ server }) => {
    await expectError(await postReport(server, nextId(), 'n', 't'.repeat(11)), 400, /\btag\b/);
  });

  limits('accepts a body of exactly the limit', async ({ server }) => {
    const id = nextId();
    const head = reportBody(id, 'padded', undefined, { padding: '' });
    const body = reportBody(id, 'padded', undefined, { padding: 'p'.repeat(1024 - head.length) });
    assert.is(Buffer.byteLength(body), 1024);
    await expectReport(await postJson(server, body), { name: 'padded' });
  });

  limits('returns 413 naming the body for a body one byte over the limit', async ({ server }) => {
    const id = nextId();
    const head = reportBody(id, 'padded', undefined, { padding: '' });
    const body = reportBody(id, 'padded', undefined, { padding: 'p'.repeat(1025 - head.length) });
    await expectError(await postJson(server, body), 413, /body/);
  });

  limits('returns 400, not 409, for an over-long name on an existing id', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'short'), { name: 'short' });
    await expectError(await postReport(server, id, 'n'.repeat(11)), 400, /\bname\b/);
  });

  limits.run();
}
