// A write is decided on a version of its report. When other writers move the report on before the
// write reaches the log (another instance; on Kafka, a write answered 503 that lands late), the
// fold voids it and the service answers from what the fold did: 404 for a delete, 409 for a
// create, and never a change to what the others wrote. The other writers here are real appends to
// the same file log, made just before the service's own.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import type { AppendOptions, EventLog, LogMessage, LogPosition } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import { Projector } from '../../src/projection/projector.js';
import { ReportService } from '../../src/reports/service.js';
import { rejection } from '../helpers/async.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface Context {
  dir: string;
  log: FileLog;
  projector: Projector;
  service: ReportService;
  /** Events another writer appends right before the service's next append. */
  interlude: ReportEvent[];
}

const late = suite<Context>('ReportService: writes whose report moved on before they reached the log');

late.before.each(async (context) => {
  const { logger } = memoryLogger();
  context.dir = await tempDir('reports-late-');
  context.log = await openFileLog({ dir: context.dir, logger });
  context.interlude = [];
  const log = context.log;
  // The service's log: the real one, with another writer's events appended just before each of its appends.
  const interleaved: EventLog = Object.assign(Object.create(log) as EventLog, {
    async append(messages: readonly LogMessage[], options?: AppendOptions): Promise<LogPosition[]> {
      const others = context.interlude.splice(0);
      if (others.length > 0) await log.append(others.map((event) => ({ key: event.subject, value: encodeEvent(event) })));
      return log.append(messages, options);
    },
  });
  context.projector = new Projector({ log, logger, retryDelayMs: 10 });
  context.projector.start();
  await context.projector.caughtUp();
  const envelope = { source: 'urn:report-store:test', newId: () => crypto.randomUUID(), time: () => new Date().toISOString() };
  context.service = new ReportService({ log: interleaved, projector: context.projector, writeTimeoutMs: 5000, logger, ...envelope });
});

late.after.each(async ({ projector, log, dir }) => {
  await projector.stop();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

late('a delete decided before a delete and a re-create by others answers 404 and leaves the new report', async ({ service, projector, interlude }) => {
  await service.create({ id: '1', name: 'first' });
  interlude.push(basedOn(deleted('1'), 1), basedOn(created('1', 'second'), 2));
  const error = await rejection(service.delete('1'));
  assert.instance(error, NotFoundError);
  assert.equal(projector.model.reports.get('1'), { name: 'second' });
  assert.is(projector.model.reports.version('1'), 3);
});

late('a create decided before a create and a delete by others answers 409 and creates nothing', async ({ service, projector, interlude }) => {
  interlude.push(basedOn(created('2', 'theirs'), 0), basedOn(deleted('2'), 1));
  const error = await rejection(service.create({ id: '2', name: 'mine' }));
  assert.instance(error, ConflictError);
  assert.match((error as Error).message, /nothing was created/);
  assert.is(projector.model.reports.has('2'), false);
  // Nothing holds the id: a retry creates it.
  assert.equal(await service.create({ id: '2', name: 'mine' }), { name: 'mine' });
});

late('a superseded create with an Idempotency-Key answers 409 again when retried with that key', async ({ service, projector, interlude }) => {
  interlude.push(basedOn(created('3', 'theirs'), 0), basedOn(deleted('3'), 1));
  assert.instance(await rejection(service.create({ id: '3', name: 'mine' }, 'key-3')), ConflictError);
  assert.equal(projector.model.keys.get('key-3')?.outcome, { kind: 'superseded' });
  assert.instance(await rejection(service.create({ id: '3', name: 'mine' }, 'key-3')), ConflictError);
  assert.is(projector.model.reports.has('3'), false);
});

late('a create that others made identically first answers 200 with the report', async ({ service, interlude }) => {
  interlude.push(basedOn(created('4', 'same'), 0));
  assert.equal(await service.create({ id: '4', name: 'same' }), { name: 'same' });
});

late.run();
