// Two service instances on one file log, each with its own projector and read model (the Kafka
// twin is test/kafka/conditional-requests.test.ts). Each folds what the other appends as the log
// hands it over, so a read through one answers what the other wrote before it. A write decided
// on a version the other instance moves on before the write reaches the log carries that version
// as its `expectedversion`: the fold voids it, changing nothing, and the request is decided again,
// where a stale If-Match is 412 (If-None-Match: * too, for a create the other made first).
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NotFoundError, PreconditionFailedError } from '../../src/errors.js';
import type { AppendOptions, EventLog, LogMessage, LogPosition, LogRecord } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import type { KeyCarrier } from '../../src/log/capabilities.js';
import { Projector } from '../../src/projector/projector.js';
import { ReportService } from '../../src/reports/service.js';
import { collect, rejection, until } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface Instance {
  readonly projector: Projector;
  readonly service: ReportService;
}

interface Context {
  dir: string;
  log: FileLog & KeyCarrier;
  a: Instance;
  b: Instance;
  /** Run once, right before B's next append reaches the log (the other instance's writes landing first). */
  beforeAppendOfB: (() => Promise<void>) | undefined;
}

const pair = suite<Context>('ReportService: two instances on one file log');

/** The instances' monotonic clock (ReportService's clockMs), moved by the tests. */
let clockMs = 0;

async function startInstance(context: Context, log: EventLog): Promise<Instance> {
  const { logger } = memoryLogger();
  const projector = new Projector({ log, logger, retryDelayMs: 10 });
  projector.start();
  await projector.caughtUp();
  const envelope = {
    source: 'urn:report-store:test',
    newId: () => crypto.randomUUID(),
    time: () => new Date().toISOString(),
  };
  const service = new ReportService({
    keys: context.log.keyStore(),
    log,
    projector,
    writeTimeoutMs: 5000,
    logger,
    clockMs: () => clockMs,
    ...envelope,
  });
  return { projector, service };
}

pair.before.each(async (context) => {
  clockMs = 0;
  context.dir = await tempDir('reports-pair-');
  context.log = await openFileLog({ dir: context.dir, logger: memoryLogger().logger });
  context.beforeAppendOfB = undefined;
  const log = context.log;
  const ofB: EventLog = Object.assign(Object.create(log) as EventLog, {
    async append(messages: readonly LogMessage[], options?: AppendOptions): Promise<LogPosition[]> {
      const interlude = context.beforeAppendOfB;
      context.beforeAppendOfB = undefined;
      await interlude?.();
      return log.append(messages, options);
    },
  });
  context.a = await startInstance(context, log);
  context.b = await startInstance(context, ofB);
});

pair.after.each(async ({ a, b, log, dir }) => {
  for (const { service, projector } of [a, b]) {
    service.stop();
    await projector.stop();
  }
  await log.keyStore().close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

/** The events appended from `from` on, as written. */
async function eventsSince(
  { log }: Context,
  from: number,
): Promise<{ type: string; expectedversion?: number; authtype?: string; authid?: string }[]> {
  const records: LogRecord[] = (await collect(log.readBatches(new Map([[0, from]])))).flat();
  return records.map(
    ({ value }) => JSON.parse(Buffer.from(value).toString('utf8')) as { type: string; expectedversion?: number },
  );
}

/** The records appended from `from` on, with their events' `type` and `expectedversion`. */
async function appendedSince(context: Context, from: number): Promise<{ type: string; expectedversion?: number }[]> {
  return (await eventsSince(context, from)).map(({ type, expectedversion }) =>
    expectedversion === undefined ? { type } : { type, expectedversion },
  );
}

async function head({ log }: Context): Promise<number> {
  return (await log.head()).get(0) ?? 0;
}

/** Report `id` at version 3 (created, deleted, created again as `name`) through A, with B told of each write. */
async function atVersionThree({ a }: Context, id: string, name: string): Promise<void> {
  await a.service.create({ id, name: 'first' });
  await a.service.delete(id);
  await a.service.create({ id, name });
}

pair(
  'a read through B answers what A wrote before it: the report and its version, 404 once deleted, the new version once created again',
  async ({ a, b }) => {
    await a.service.create({ id: '1', name: 'first', tag: 't' });
    assert.equal(await b.service.read('1'), { kind: 'report', report: { name: 'first', tag: 't' }, version: 1 });
    await a.service.delete('1');
    assert.instance(await rejection(b.service.read('1')), NotFoundError);
    assert.instance(
      await rejection(b.service.read('1', { ifNoneMatch: { kind: 'versions', versions: [1] } })),
      NotFoundError,
    );
    await a.service.create({ id: '1', name: 'second' });
    assert.equal(await b.service.read('1', { ifNoneMatch: { kind: 'versions', versions: [1] } }), {
      kind: 'report',
      report: { name: 'second' },
      version: 3,
    });
  },
);

pair('a stale If-Match is 412 through either instance, writing nothing, for a DELETE and a POST', async (context) => {
  const { a, b } = context;
  await atVersionThree(context, '2', 'third');
  const before = await head(context);
  for (const { service } of [a, b]) {
    assert.instance(
      await rejection(service.delete('2', undefined, undefined, { ifMatch: { kind: 'versions', versions: [1] } })),
      PreconditionFailedError,
    );
    assert.instance(
      await rejection(
        service.create({ id: '2', name: 'third' }, undefined, undefined, {
          ifMatch: { kind: 'versions', versions: [1] },
        }),
      ),
      PreconditionFailedError,
    );
  }
  assert.is(await head(context), before);
  assert.equal(await b.service.read('2'), { kind: 'report', report: { name: 'third' }, version: 3 });
});

pair(
  'a delete through B with If-Match decided on a version A moves on before it lands names it as expectedversion, is voided by the fold, and answers 412: the new report stays',
  async (context) => {
    const { a, b } = context;
    await b.service.create({ id: '3', name: 'first' });
    const before = await head(context);
    context.beforeAppendOfB = async () => {
      await a.service.delete('3');
      await a.service.create({ id: '3', name: 'second' });
    };
    const answer = await rejection(
      b.service.delete('3', undefined, undefined, { ifMatch: { kind: 'versions', versions: [1] } }),
    );
    assert.instance(answer, PreconditionFailedError);
    assert.match((answer as Error).message, /If-Match/);
    assert.equal(await appendedSince(context, before), [
      { type: 'ReportDeleted', expectedversion: 1 },
      { type: 'ReportCreated', expectedversion: 2 },
      { type: 'ReportDeleted', expectedversion: 1 },
    ]);
    for (const { projector, service } of [a, b]) {
      assert.is(projector.model.counts.voidEvents, 1);
      assert.equal(await service.read('3'), { kind: 'report', report: { name: 'second' }, version: 3 });
    }
  },
);

pair(
  "a create through B with If-None-Match: * decided before A created the report is voided by the fold and answers 412: A's report stays",
  async (context) => {
    const { a, b } = context;
    const before = await head(context);
    context.beforeAppendOfB = async () => {
      await a.service.create({ id: '4', name: 'from A' });
    };
    const answer = await rejection(
      b.service.create({ id: '4', name: 'from B' }, undefined, undefined, { ifNoneMatch: { kind: 'any' } }),
    );
    assert.instance(answer, PreconditionFailedError);
    assert.match((answer as Error).message, /If-None-Match/);
    assert.equal(await appendedSince(context, before), [
      { type: 'ReportCreated', expectedversion: 0 },
      { type: 'ReportCreated', expectedversion: 0 },
    ]);
    for (const { projector, service } of [a, b]) {
      assert.is(projector.model.counts.voidEvents, 1);
      assert.equal(await service.read('4'), { kind: 'report', report: { name: 'from A' }, version: 1 });
    }
  },
);

pair(
  'a write the fold voided still shows the instance can write: /readyz is not held at 503 by an older write still waiting',
  async (context) => {
    const { a, b } = context;
    // A write through B that waits (its append held) past the readiness limit, 2.5 s.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let appending = false;
    context.beforeAppendOfB = () => {
      appending = true;
      return held;
    };
    const waiting = b.service.create({ id: '20', name: 'slow' });
    await until(() => appending, 'the first write to reach its append');
    clockMs = 3000;
    assert.is(b.service.writesFailing(), true, 'a write waiting 3 s, none begun after it confirmed');
    // A later create through B reaches the log after A created the same report: voided, decided again, 200.
    context.beforeAppendOfB = async () => {
      await a.service.create({ id: '21', name: 'same' });
    };
    assert.equal(await b.service.create({ id: '21', name: 'same' }), { name: 'same' });
    assert.is(b.projector.model.counts.voidEvents, 1);
    assert.is(b.service.writesFailing(), false, 'the voided write went through the log and the fold');
    release();
    await waiting;
  },
);

pair(
  "a conditional write carries the request's authcontext in every event it writes, also when it is decided again after the fold voided its first one",
  async (context) => {
    const { a, b } = context;
    const cleaner = { authtype: 'api_key', authid: 'cleanup-job' } as const;
    await a.service.create({ id: '5', name: 'first' });
    const before = await head(context);
    // A moves report 5 on (deleted, created again: version 3) before B's delete lands: B's first event
    // is voided, and If-Match: * still holds on the state that holds A's writes, so B deletes.
    context.beforeAppendOfB = async () => {
      await a.service.delete('5');
      await a.service.create({ id: '5', name: 'second' });
    };
    await b.service.delete('5', undefined, undefined, { ifMatch: { kind: 'any' } }, cleaner);
    await b.service.create(
      { id: '6', name: 'new' },
      undefined,
      undefined,
      { ifNoneMatch: { kind: 'any' } },
      { authtype: 'api_key', authid: 'importer' },
    );
    await b.service.delete('6', undefined, undefined, { ifMatch: { kind: 'versions', versions: [1] } }, cleaner);
    const written = (await eventsSince(context, before)).map(({ type, expectedversion, authtype, authid }) => ({
      type,
      expectedversion,
      authtype,
      authid,
    }));
    assert.equal(written, [
      { type: 'ReportDeleted', expectedversion: 1, authtype: undefined, authid: undefined },
      { type: 'ReportCreated', expectedversion: 2, authtype: undefined, authid: undefined },
      { type: 'ReportDeleted', expectedversion: 1, ...cleaner },
      { type: 'ReportDeleted', expectedversion: 3, ...cleaner },
      { type: 'ReportCreated', expectedversion: 0, authtype: 'api_key', authid: 'importer' },
      { type: 'ReportDeleted', expectedversion: 1, ...cleaner },
    ]);
    assert.is(b.projector.model.counts.voidEvents, 1);
    assert.instance(await rejection(a.service.read('5')), NotFoundError);
  },
);

pair.run();
