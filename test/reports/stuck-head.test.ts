// A no-write answer first catches up with the head of the id's partition (`log.latest`). When the
// broker asked for that head does not answer, the request still gets its 503 by the write
// deadline, and /readyz's write outcomes count it as waiting before then (the head read once
// waited on every partition's leader, past the deadline).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UnavailableError } from '../../src/errors.js';
import type { KeyedHeads } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/event-log.js';
import { rejection } from '../helpers/async.js';
import { startFileLogService, type FileLogService } from '../helpers/file-log-service.js';

const stuck = suite<{ running: FileLogService; service: FileLogService['service'] }>(
  'ReportService: the head read of a no-write answer does not answer',
);

stuck.before.each(async (context) => {
  // The file log with keyed heads (its one partition) whose head read never settles, as a paused broker's.
  const keyedHeads: KeyedHeads = { latest: () => new Promise<never>(() => undefined), partitionFor: () => 0 };
  context.running = await startFileLogService('reports-stuck-head-', {
    logBefore: (log) => Object.assign(Object.create(log) as EventLog, keyedHeads),
  });
  context.service = context.running.service;
});

stuck.after.each(async ({ running }) => {
  await running.close();
});

stuck(
  'a delete of a missing report answers 503 by the write deadline instead of waiting for the head',
  async ({ service }) => {
    const error = await rejection(service.delete('404'));
    assert.instance(error, UnavailableError);
  },
);

stuck('the waiting request counts against readiness after 3 s, and its 503 for 5 s after it', async (context) => {
  const answer = rejection(context.service.delete('405'));
  assert.is(context.service.writesFailing(), false);
  context.running.clock.nowMs = 3001;
  assert.is(context.service.writesFailing(), true, 'waiting for 3 s with nothing confirmed');
  assert.instance(await answer, UnavailableError);
  assert.is(context.service.writesFailing(), true, 'answered 503');
  context.running.clock.nowMs = 8002;
  assert.is(context.service.writesFailing(), false, 'nothing since the 503 for 5 s');
});

stuck.run();
