// A no-write answer first catches up with the head of the id's partition (`log.latest`). When the
// broker asked for that head does not answer, the request still gets its 503 by the write
// deadline, and /readyz's write outcomes count it as waiting before then (the head read once
// waited on every partition's leader, past the deadline).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { UnavailableError } from '../../src/errors.js';
import type { KeyedHeads } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import type { KeyCarrier } from '../../src/log/capabilities.js';
import { Projector } from '../../src/projection/projector.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { ReportService } from '../../src/reports/service.js';
import { rejection } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface Context {
  dir: string;
  log: FileLog & KeyCarrier;
  projector: Projector;
  keys: KeyStore;
  nowMs: number;
  service: ReportService;
}

const stuck = suite<Context>('ReportService: the head read of a no-write answer does not answer');

stuck.before.each(async (context) => {
  const { logger } = memoryLogger();
  context.dir = await tempDir('reports-stuck-head-');
  context.log = await openFileLog({ dir: context.dir, logger });
  context.nowMs = 0;
  // The file log with keyed heads (its one partition) whose head read never settles, as a paused broker's.
  const keyedHeads: KeyedHeads = { latest: () => new Promise<never>(() => undefined), partitionFor: () => 0 };
  const log: EventLog = Object.assign(Object.create(context.log) as EventLog, keyedHeads);
  context.projector = new Projector({ log: context.log, logger, retryDelayMs: 10 });
  context.projector.start();
  await context.projector.caughtUp();
  const envelope = { source: 'urn:report-store:test', newId: () => crypto.randomUUID(), time: () => new Date().toISOString() };
  context.keys = context.log.keyStore();
  context.service = new ReportService({ keys: context.keys, log, projector: context.projector, writeTimeoutMs: 200, logger, clockMs: () => context.nowMs, ...envelope });
});

stuck.after.each(async ({ projector, keys, service, log, dir }) => {
  service.stop();
  await projector.stop();
  await keys.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

stuck('a delete of a missing report answers 503 by the write deadline instead of waiting for the head', async ({ service }) => {
  const error = await rejection(service.delete('404'));
  assert.instance(error, UnavailableError);
});

stuck('the waiting request counts against readiness after 3 s, and its 503 for 5 s after it', async (context) => {
  const answer = rejection(context.service.delete('405'));
  assert.is(context.service.writesFailing(), false);
  context.nowMs = 3001;
  assert.is(context.service.writesFailing(), true, 'waiting for 3 s with nothing confirmed');
  assert.instance(await answer, UnavailableError);
  assert.is(context.service.writesFailing(), true, 'answered 503');
  context.nowMs = 8002;
  assert.is(context.service.writesFailing(), false, 'nothing since the 503 for 5 s');
});

stuck.run();
