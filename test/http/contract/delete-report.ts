// DELETE /reports/{id}: 204, 404 for absent ids, 400 for ids that are not a decimal int64.
import * as assert from 'uvu/assert';
import { claim, deleteReport, logHead, postReport, serverSuite, type StartServer } from '../requests.js';
import { expectError, expectNoContent, expectReport } from '../responses.js';
import { openedReport } from '../../helpers/opened.js';

export function deleteReportContract(logName: string, start: StartServer, nextId: () => string): void {
  const remove = serverSuite(`${logName}: DELETE /reports/{id}`, start);

  remove('answers 204 with an empty body for an existing report', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'doomed'), { name: 'doomed' });
    const response = await deleteReport(server, id);
    await expectNoContent(response);
    assert.is(response.headers.get('content-type'), null);
    assert.not.ok(server.projector.model.reports.has(id));
  });

  remove('appends exactly one record per delete', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'counted'), { name: 'counted' });
    const before = await logHead(server);
    await expectNoContent(await deleteReport(server, id));
    assert.is(await logHead(server), before + 1);
  });

  remove('returns 404 naming the id when the report was already deleted, appending nothing', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'twice'), { name: 'twice' });
    await expectNoContent(await deleteReport(server, id));
    const before = await logHead(server);
    await expectError(await deleteReport(server, id), 404, new RegExp(id));
    assert.is(await logHead(server), before);
  });

  remove('returns 404 for an id never created', async ({ server }) => {
    const id = nextId();
    await expectError(await deleteReport(server, id), 404, new RegExp(id));
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
    remove(`returns 400 naming the id for /reports/${raw}`, async ({ server }) => {
      await expectError(await deleteReport(server, raw), 400, /\bid\b/);
    });
  }

  remove('reads the path id as a decimal: 007 deletes 7', async ({ server }) => {
    await claim(server, '7');
    await expectReport(await postReport(server, '7', 'padded'), { name: 'padded' });
    await expectNoContent(await deleteReport(server, '007'));
    assert.not.ok(server.projector.model.reports.has('7'));
  });

  remove('lets a deleted id be created again, even with another name', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'before', 'a'), { name: 'before', tag: 'a' });
    await expectNoContent(await deleteReport(server, id));
    await expectReport(await postReport(server, id, 'after'), { name: 'after' });
    assert.equal(await openedReport(server.projector.model.reports, server.keys, id), { name: 'after' });
    await expectError(await postReport(server, id, 'before', 'a'), 409);
  });

  remove.run();
}
