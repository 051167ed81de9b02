// A write is decided on a version of its report. When other writers move the report on before the
// write reaches the log (another instance not yet folded here; on Kafka, a write answered 503 that
// lands late), the fold voids it, never changing what the others wrote, and the service decides
// again on the state that now holds them: it writes again, or answers 404/409 when that state says
// so. The other writers here are real appends to the same file log, made just before the service's own.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import { ConflictError, NotFoundError, PreconditionFailedError, UnavailableError } from '../../src/errors.js';
import type { AppendOptions, EventLog, LogMessage, LogPosition } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import type { KeyCarrier } from '../../src/log/capabilities.js';
import { Projector } from '../../src/projector/projector.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { MAX_DECISIONS, ReportService } from '../../src/reports/service.js';
import { rejection } from '../helpers/async.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { openedReport } from '../helpers/opened.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface Context {
  dir: string;
  log: FileLog & KeyCarrier;
  projector: Projector;
  keys: KeyStore;
  service: ReportService;
  /** Events another writer appends right before the service's next append. */
  interlude: ReportEvent[];
  /** Writes the service decided again. */
  decidedAgain: number;
  /** The service's next append is written twice (as a Kafka producer's retry can), answered with the second copy. */
  twice: boolean;
  /** Events another writer appends between those two copies. */
  between: ReportEvent[];
}

const late = suite<Context>('ReportService: writes whose report moved on before they reached the log');

late.before.each(async (context) => {
  const { logger } = memoryLogger();
  context.dir = await tempDir('reports-late-');
  context.log = await openFileLog({ dir: context.dir, logger });
  context.interlude = [];
  context.decidedAgain = 0;
  context.twice = false;
  context.between = [];
  const log = context.log;
  // The service's log: the real one, with another writer's events appended just before each of its appends.
  const interleaved: EventLog = Object.assign(Object.create(log) as EventLog, {
    async append(messages: readonly LogMessage[], options?: AppendOptions): Promise<LogPosition[]> {
      const others = context.interlude.splice(0);
      if (others.length > 0)
        await log.append(others.map((event) => ({ key: event.subject, value: encodeEvent(event) })));
      if (context.twice) {
        context.twice = false;
        // The first copy carries the content's key (keys.db takes a key once).
        await log.append(messages, options);
        const others = context.between.splice(0);
        if (others.length > 0)
          await log.append(others.map((event) => ({ key: event.subject, value: encodeEvent(event) })));
        return log.append(
          messages.map(({ key, value }) => ({ key, value })),
          options,
        );
      }
      return log.append(messages, options);
    },
  });
  context.projector = new Projector({ log, logger, retryDelayMs: 10 });
  context.projector.start();
  await context.projector.caughtUp();
  const envelope = {
    source: 'urn:report-store:test',
    newId: () => crypto.randomUUID(),
    time: () => new Date().toISOString(),
  };
  context.keys = context.log.keyStore();
  context.service = new ReportService({
    keys: context.keys,
    log: interleaved,
    projector: context.projector,
    writeTimeoutMs: 5000,
    logger,
    ...envelope,
    onDecidedAgain: () => (context.decidedAgain += 1),
  });
});

late.after.each(async ({ projector, keys, service, log, dir }) => {
  service.stop();
  await projector.stop();
  await keys.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

late(
  'a delete decided before a delete and a re-create by others is decided again and deletes the new report (204)',
  async (context) => {
    const { service, projector, interlude } = context;
    await service.create({ id: '1', name: 'first' });
    interlude.push(basedOn(deleted('1'), 1), basedOn(created('1', 'second'), 2));
    await service.delete('1');
    assert.is(projector.model.reports.has('1'), false);
    assert.is(projector.model.reports.version('1'), 4);
    assert.is(context.decidedAgain, 1);
  },
);

late(
  'a delete decided before another delete answers 404: the report was absent when its event reached the log',
  async (context) => {
    const { service, projector, interlude } = context;
    await service.create({ id: '5', name: 'first' });
    interlude.push(basedOn(deleted('5'), 1));
    assert.instance(await rejection(service.delete('5')), NotFoundError);
    assert.is(projector.model.reports.version('5'), 2);
    assert.is(context.decidedAgain, 0);
  },
);

late(
  'a create decided before a create and a delete by others is decided again and creates the report (200)',
  async ({ service, projector, interlude, keys }) => {
    interlude.push(basedOn(created('2', 'theirs'), 0), basedOn(deleted('2'), 1));
    assert.equal(await service.create({ id: '2', name: 'mine' }), { name: 'mine' });
    assert.equal(await openedReport(projector.model.reports, keys, '2'), { name: 'mine' });
    assert.is(projector.model.reports.version('2'), 3);
  },
);

late(
  'a create decided before another body was created answers 409, and one before the same body 200',
  async ({ service, interlude }) => {
    interlude.push(basedOn(created('6', 'theirs'), 0));
    const error = await rejection(service.create({ id: '6', name: 'mine' }));
    assert.instance(error, ConflictError);
    assert.match((error as Error).message, /already exists with a different name or tag/);
    interlude.push(basedOn(created('4', 'same'), 0));
    assert.equal(await service.create({ id: '4', name: 'same' }), { name: 'same' });
  },
);

late(
  'a superseded create with an Idempotency-Key is written again with the key, which then answers its retries',
  async ({ service, projector, interlude }) => {
    interlude.push(basedOn(created('3', 'theirs'), 0), basedOn(deleted('3'), 1));
    assert.equal(await service.create({ id: '3', name: 'mine' }, 'key-3'), { name: 'mine' });
    assert.equal(projector.model.keys.get('key-3')?.outcome, { kind: 'created', incarnation: 3 });
    assert.equal(await service.create({ id: '3', name: 'mine' }, 'key-3'), { name: 'mine' });
    assert.is(projector.model.reports.version('3'), 3);
  },
);

late(
  'a superseded delete with an Idempotency-Key is written again and its retry answers 204',
  async ({ service, projector, interlude }) => {
    await service.create({ id: '7', name: 'first' });
    interlude.push(basedOn(deleted('7'), 1), basedOn(created('7', 'second'), 2));
    await service.delete('7', 'key-7');
    assert.equal(projector.model.keys.get('key-7')?.outcome, { kind: 'deleted' });
    await service.delete('7', 'key-7');
    assert.is(projector.model.reports.has('7'), false);
  },
);

late(
  'a delete with If-Match decided before a delete and a re-create by others answers 412, not 204: the new report stays',
  async (context) => {
    const { service, projector, interlude, log } = context;
    await service.create({ id: '9', name: 'first' });
    interlude.push(basedOn(deleted('9'), 1), basedOn(created('9', 'second'), 2));
    const before = (await log.head()).get(0);
    const error = await rejection(
      service.delete('9', undefined, undefined, { ifMatch: { kind: 'versions', versions: [1] } }),
    );
    assert.instance(error, PreconditionFailedError);
    assert.match((error as Error).message, /If-Match/);
    // The others' two events and this delete's, void: it names version 1, and the report was at 3.
    assert.is((await log.head()).get(0), (before ?? 0) + 3);
    assert.is(projector.model.counts.voidEvents, 1);
    assert.is(projector.model.reports.version('9'), 3);
    assert.equal(await openedReport(projector.model.reports, context.keys, '9'), { name: 'second' });
    assert.is(
      context.decidedAgain,
      0,
      'a version the report has left is never matched again: nothing is written again',
    );
  },
);

late(
  'a delete with If-Match decided before another delete answers 404, as the retry of its Idempotency-Key does',
  async (context) => {
    const { service, projector, interlude } = context;
    await service.create({ id: '10', name: 'first' });
    interlude.push(basedOn(deleted('10'), 1));
    const ifMatch = { ifMatch: { kind: 'versions', versions: [1] } } as const;
    assert.instance(await rejection(service.delete('10', 'key-10', undefined, ifMatch)), NotFoundError);
    // Its void event found no report: the key records that, and a retry gets the same answer.
    assert.equal(projector.model.keys.get('key-10')?.outcome, { kind: 'not-found' });
    assert.instance(await rejection(service.delete('10', 'key-10', undefined, ifMatch)), NotFoundError);
  },
);

late(
  'a delete with If-Match: * decided before a delete and a re-create is decided again and deletes the new report',
  async (context) => {
    const { service, projector, interlude } = context;
    await service.create({ id: '11', name: 'first' });
    interlude.push(basedOn(deleted('11'), 1), basedOn(created('11', 'second'), 2));
    await service.delete('11', undefined, undefined, { ifMatch: { kind: 'any' } });
    assert.is(projector.model.reports.version('11'), 4);
    assert.is(context.decidedAgain, 1);
  },
);

late('a create with If-None-Match: * decided before another create answers 412, not 200 or 409', async (context) => {
  const { service, projector, interlude } = context;
  interlude.push(basedOn(created('12', 'theirs'), 0));
  const error = await rejection(
    service.create({ id: '12', name: 'theirs' }, undefined, undefined, { ifNoneMatch: { kind: 'any' } }),
  );
  assert.instance(error, PreconditionFailedError);
  assert.match((error as Error).message, /If-None-Match/);
  assert.is(projector.model.reports.version('12'), 1);
});

late(
  `a write that others supersede at every attempt gives up after ${MAX_DECISIONS} with 503, having changed nothing`,
  async (context) => {
    const { service, projector, interlude, log } = context;
    await service.create({ id: '8', name: 'first' });
    // Before each of the service's appends, another writer deletes the report and creates it again.
    const appendOf = log.append.bind(log);
    let version = projector.model.reports.version('8');
    const refill = () => {
      interlude.push(basedOn(deleted('8'), version), basedOn(created('8', `theirs ${version}`), version + 1));
      version += 2;
    };
    refill();
    Object.assign(log, {
      append: (messages: readonly LogMessage[], options?: AppendOptions) => {
        const result = appendOf(messages, options);
        // The service's own appends (encoded through the projector's table), not this test's interludes.
        if (messages.every((message) => projector.encoded.eventOf(message.value) !== undefined))
          void result.then(refill);
        return result;
      },
    });
    const error = await rejection(service.delete('8'));
    assert.instance(error, UnavailableError);
    assert.match((error as Error).message, /retrying is safe/);
    assert.is(context.decidedAgain, MAX_DECISIONS - 1);
    assert.is(projector.model.counts.voidEvents, MAX_DECISIONS);
    assert.ok(projector.model.reports.has('8'), 'the report the others wrote is still there');
  },
);

late(
  'a create whose event was written twice answers with its report, decides nothing again and keeps the key',
  async (context) => {
    const { service, projector, keys } = context;
    context.twice = true;
    // The second copy is void (the first made the report); it is the copy the log answered with.
    assert.equal(await service.create({ id: '9', name: 'once', tag: 't' }), { name: 'once', tag: 't' });
    assert.is(context.decidedAgain, 0);
    assert.is(projector.model.counts.voidEvents, 1);
    assert.is(projector.model.reports.version('9'), 1);
    assert.equal(await openedReport(projector.model.reports, keys, '9'), { name: 'once', tag: 't' });
    // A later start folds both copies, and still opens the report.
    const again = new Projector({ log: context.log, logger: memoryLogger().logger, retryDelayMs: 10 });
    again.start();
    await again.caughtUp();
    assert.equal(await openedReport(again.model.reports, keys, '9'), { name: 'once', tag: 't' });
    await again.stop();
  },
);

late(
  'a create written twice with a delete between the copies answers with its report and does not make it again',
  async (context) => {
    const { service, projector } = context;
    context.twice = true;
    // Another client's delete lands between the copies: the second copy is void as superseded.
    context.between.push(basedOn(deleted('10'), 1));
    assert.equal(await service.create({ id: '10', name: 'once' }), { name: 'once' });
    assert.is(context.decidedAgain, 0, 'not decided again');
    assert.is(projector.model.reports.has('10'), false, 'the delete stands');
    assert.is(projector.model.reports.version('10'), 2, 'created once, deleted once');
  },
);

late.run();
