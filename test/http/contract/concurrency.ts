// Concurrent writers on one id: a retry storm appends once; racing names produce one winner.
import * as assert from 'uvu/assert';
import { deleteReport, logHead, postReport, serverSuite, type StartServer } from '../requests.js';
import { expectError, expectJson, expectNoContent, expectReport } from '../responses.js';
import { openedReport } from '../../helpers/opened.js';

const WRITERS = 50;

export function concurrencyContract(logName: string, start: StartServer, nextId: () => string): void {
  const race = serverSuite(`${logName}: concurrent writes`, start);

  race(`answers ${WRITERS} concurrent identical creates with 200 and appends one record`, async ({ server }) => {
    const id = nextId();
    const before = await logHead(server);
    const responses = await Promise.all(Array.from({ length: WRITERS }, () => postReport(server, id, 'storm', 's')));
    for (const response of responses) await expectReport(response, { name: 'storm', tag: 's' });
    assert.is(await logHead(server), before + 1);
  });

  race(
    `answers ${WRITERS} concurrent creates with distinct names with one 200 and ${WRITERS - 1} 409`,
    async ({ server }) => {
      const id = nextId();
      const names = Array.from({ length: WRITERS }, (_, index) => `racer ${index}`);
      const responses = await Promise.all(names.map((name) => postReport(server, id, name)));
      const winners: string[] = [];
      for (const [index, response] of responses.entries()) {
        if (response.status === 200) {
          assert.equal(await expectJson(response, 200), { name: names[index] });
          winners.push(names[index] as string);
        } else {
          await expectError(response, 409);
        }
      }
      assert.is(winners.length, 1);
      const winner = winners[0] as string;
      assert.equal(await openedReport(server.projector.model.reports, server.keys, id), { name: winner });
      await expectReport(await postReport(server, id, winner), { name: winner });
    },
  );

  race(
    `answers ${WRITERS} concurrent deletes of one report with one 204 and ${WRITERS - 1} 404`,
    async ({ server }) => {
      const id = nextId();
      await expectReport(await postReport(server, id, 'contested'), { name: 'contested' });
      const before = await logHead(server);
      const responses = await Promise.all(Array.from({ length: WRITERS }, () => deleteReport(server, id)));
      const statuses = responses.map((response) => response.status);
      assert.is(statuses.filter((status) => status === 204).length, 1);
      assert.is(statuses.filter((status) => status === 404).length, WRITERS - 1);
      for (const response of responses) {
        if (response.status === 204) await expectNoContent(response);
        else await expectError(response, 404);
      }
      assert.is(await logHead(server), before + 1);
    },
  );

  race.run();
}
