import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { Cursor, EventLog, LogPosition, LogRecord, ReadOptions } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import { ProjectionTimeoutError, Projector } from '../../src/projector/projector.js';
import { collect, rejection, withTimeout } from '../helpers/async.js';
import { created, deleted } from '../helpers/events.js';
import { memoryLogger, tempDir } from '../helpers/server.js';
import { readRecords } from '../../src/log/record-batches.js';

const GUARD_MS = 10_000;

interface Context {
  dir: string;
  log: FileLog;
  projector?: Projector;
  lines: () => Record<string, unknown>[];
}

async function appendEvent(log: FileLog, event: ReportEvent): Promise<LogPosition> {
  const [position] = await log.append([{ key: event.subject, value: encodeEvent(event) }]);
  return position as LogPosition;
}

function startProjector(context: Context): Projector {
  const { logger, lines } = memoryLogger();
  context.lines = lines;
  context.projector = new Projector({ log: context.log, logger, retryDelayMs: 10 });
  context.projector.start();
  return context.projector;
}

const projector = suite<Context>('Projector');
projector.before.each(async (context) => {
  context.dir = await tempDir('reports-projector-');
  context.log = await openFileLog({ dir: context.dir, logger: memoryLogger().logger });
  context.projector = undefined;
});
projector.after.each(async (context) => {
  await context.projector?.stop();
  await context.log.close();
  await rm(context.dir, { recursive: true, force: true });
});

projector('catches up with the history already in the log', async (context) => {
  for (const event of [created('1', 'a'), created('2', 'b', 't'), created('3', 'c'), deleted('1')])
    await appendEvent(context.log, event);
  const p = startProjector(context);
  await withTimeout(p.caughtUp(), GUARD_MS, 'caughtUp()');
  assert.ok(p.isCaughtUp());
  assert.equal(Object.fromEntries(p.model.reports), { 2: { name: 'b', tag: 't' }, 3: { name: 'c' } });
  assert.equal(p.progress().cursor, new Map([[0, 4]]));
  assert.is(p.progress().applied, 4);
});

projector('is caught up at once on an empty log', async (context) => {
  const p = startProjector(context);
  await withTimeout(p.caughtUp(), GUARD_MS, 'caughtUp()');
  assert.is(p.model.reports.size, 0);
});

projector('is not caught up before it starts', async (context) => {
  await appendEvent(context.log, created('1', 'a'));
  const p = new Projector({ log: context.log, logger: memoryLogger().logger });
  assert.not.ok(p.isCaughtUp());
  assert.is(p.model.reports.size, 0);
});

projector(
  "is never ready when the start's check before readiness refuses what it folded, and caughtUp() rejects with its error",
  async (context) => {
    await appendEvent(context.log, created('1', 'a'));
    const checked: number[] = [];
    let caughtUpCalls = 0;
    const refusal = new Error('not this store');
    const p = new Projector({
      log: context.log,
      logger: memoryLogger().logger,
      beforeReady: () => {
        checked.push(p.model.reports.size);
        return refusal;
      },
      onCaughtUp: () => (caughtUpCalls += 1),
    });
    context.projector = p;
    p.start();
    assert.is(await rejection(withTimeout(p.caughtUp(), GUARD_MS, 'the refusal')), refusal);
    await appendEvent(context.log, created('2', 'b'));
    const deadline = Date.now() + 2000;
    while (p.model.reports.size < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(checked, [1], 'checked once, on the model caught up with the head seen at start');
    assert.not.ok(p.isCaughtUp());
    assert.is(caughtUpCalls, 0);
  },
);

projector('resolves waitFor with created, void and deleted as the records are applied', async (context) => {
  const p = startProjector(context);
  await p.caughtUp();
  const outcomes = [];
  for (const event of [created('5', 'first'), created('5', 'second'), deleted('5'), deleted('5')]) {
    const position = await appendEvent(context.log, event);
    outcomes.push(await withTimeout(p.waitFor(position, GUARD_MS), GUARD_MS, `waitFor(${position.offset})`));
  }
  assert.equal(outcomes, ['created', 'void', 'deleted', 'void']);
  assert.is(p.model.reports.has('5'), false);
});

projector('resolves waitFor for a position that was applied before the call', async (context) => {
  const position = await appendEvent(context.log, created('8', 'early'));
  const p = startProjector(context);
  await p.caughtUp();
  assert.is(await p.waitFor(position, GUARD_MS), 'created');
  assert.equal(p.model.reports.get('8'), { name: 'early' });
});

projector('resolves waitFor that was called before the record was appended', async (context) => {
  const p = startProjector(context);
  await p.caughtUp();
  const waiting = p.waitFor({ partition: 0, offset: 0 }, GUARD_MS);
  await appendEvent(context.log, created('9', 'later'));
  assert.is(await withTimeout(waiting, GUARD_MS, 'waitFor(0)'), 'created');
});

projector('logs its progress while it catches up with a long history', async (context) => {
  for (let i = 0; i < 20; i += 1) await appendEvent(context.log, created(String(100 + i), `old ${i}`));
  const { logger, lines } = memoryLogger();
  let clock = 0;
  // Each look at the clock is three seconds later, so the progress interval passes during the
  // catch-up (the projector looks between batches, and these 20 records are one batch).
  const p = new Projector({ log: context.log, logger, now: () => (clock += 3000) });
  context.projector = p;
  p.start();
  await withTimeout(p.caughtUp(), GUARD_MS, 'catch-up');
  const progress = lines().filter((line) => line['msg'] === 'catching up with the event log');
  assert.ok(progress.length > 0, 'no progress line');
  assert.is(progress[0]?.['total'], 20);
  assert.type(progress[0]?.['eventsPerSecond'], 'number');
  assert.ok(
    lines().some((line) => line['msg'] === 'read model caught up with the event log' && line['applied'] === 20),
  );
});

projector('resolves every waitFor on one position, not only the last', async (context) => {
  const p = startProjector(context);
  await p.caughtUp();
  const first = p.waitFor({ partition: 0, offset: 0 }, GUARD_MS);
  const second = p.waitFor({ partition: 0, offset: 0 }, GUARD_MS);
  await appendEvent(context.log, created('10', 'twice awaited'));
  assert.equal(await withTimeout(Promise.all([first, second]), GUARD_MS, 'both waiters'), ['created', 'created']);
});

projector('stop rejects writers still waiting instead of leaving them pending', async (context) => {
  const p = startProjector(context);
  await p.caughtUp();
  const waiting = p.waitFor({ partition: 0, offset: 5 }, GUARD_MS);
  await p.stop();
  assert.instance(await withTimeout(rejection(waiting), 1000, 'rejection after stop'), ProjectionTimeoutError);
});

projector('rejects waitFor with ProjectionTimeoutError when the record never comes', async (context) => {
  const p = startProjector(context);
  await p.caughtUp();
  const error = await rejection(p.waitFor({ partition: 0, offset: 41 }, 20));
  assert.instance(error, ProjectionTimeoutError);
  assert.equal((error as ProjectionTimeoutError).position, { partition: 0, offset: 41 });
});

projector('skips a record that is not an event, counts it and logs it', async (context) => {
  await appendEvent(context.log, created('1', 'a'));
  const [bad] = await context.log.append([{ key: '2', value: Buffer.from('{"hello":"world"}') }]);
  const after = await appendEvent(context.log, created('3', 'c'));
  const p = startProjector(context);
  await withTimeout(p.caughtUp(), GUARD_MS, 'caughtUp()');
  assert.is(await p.waitFor(bad as LogPosition, GUARD_MS), 'invalid');
  assert.is(await p.waitFor(after, GUARD_MS), 'created');
  assert.is(p.progress().invalid, 1);
  assert.is(p.progress().applied, 3);
  assert.equal([...p.model.reports.keys()], ['1', '3']);
  const warning = context.lines().find((line) => line['level'] === 40 && line['offset'] === 1);
  assert.ok(warning, JSON.stringify(context.lines()));
  assert.type(warning['reason'], 'string');
});

projector('skips a record that is not JSON at all', async (context) => {
  const [bad] = await context.log.append([{ key: 'x', value: Buffer.from([0xff, 0x00, 0x7b]) }]);
  const p = startProjector(context);
  await p.caughtUp();
  assert.is(await p.waitFor(bad as LogPosition, GUARD_MS), 'invalid');
  assert.is(p.progress().invalid, 1);
});

projector('records the timestamp of the last applied record', async (context) => {
  await appendEvent(context.log, created('1', 'a'));
  const [record] = await collect(readRecords(context.log, new Map()));
  const p = startProjector(context);
  await p.caughtUp();
  assert.is(p.health.observations().lastRecordTimestampMs, record?.timestampMs);
  assert.type(p.health.observations().lastAppliedAtMs, 'number');
});

projector('stops following on stop(), leaving later records unapplied', async (context) => {
  const p = startProjector(context);
  await p.caughtUp();
  await withTimeout(p.stop(), GUARD_MS, 'stop()');
  const position = await appendEvent(context.log, created('1', 'a'));
  // A second projector on the same log sees the record; the stopped one must not.
  const witness = new Projector({ log: context.log, logger: memoryLogger().logger });
  witness.start();
  assert.is(await withTimeout(witness.waitFor(position, GUARD_MS), GUARD_MS, 'the witness projector'), 'created');
  await witness.stop();
  assert.is(p.model.reports.size, 0);
});

/** The log with its follow loop held back until `release` and given a copy of the cursor (not the live one); `followed` counts the batches it handed on. */
function heldBack(log: FileLog): { log: EventLog; release: () => void; followed: () => number } {
  let release = () => undefined as void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let followed = 0;
  async function* followBatches(from: Cursor, options?: ReadOptions): AsyncIterable<readonly LogRecord[]> {
    const copy = new Map(from);
    await gate;
    for await (const batch of log.followBatches(copy, options)) {
      yield batch;
      followed += 1;
    }
  }
  return { log: Object.assign(Object.create(log) as FileLog, { followBatches }), release, followed: () => followed };
}

projector(
  'folds its own appends before they are acknowledged, and only once (the commit hand-off)',
  async (context) => {
    const p = startProjector(context);
    await p.caughtUp();
    await appendEvent(context.log, created('1', 'a'));
    // No waitFor: the record was applied before the append resolved.
    assert.equal(p.model.reports.get('1'), { name: 'a' });
    assert.equal(p.model.cursor, new Map([[0, 1]]));
    await appendEvent(context.log, created('2', 'b'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(p.model.counts, { records: 2, voidEvents: 0, invalid: 0 });
  },
);

projector(
  'a failure while folding handed-over records is logged and leaves the durable append acknowledged',
  async (context) => {
    const { logger, lines } = memoryLogger();
    let calls = 0;
    const p = new Projector({
      log: context.log,
      logger,
      retryDelayMs: 10,
      onApplied: () => {
        calls += 1;
        if (calls === 1) throw new Error('scheduler broke');
      },
    });
    context.projector = p;
    p.start();
    await p.caughtUp();
    const position = await appendEvent(context.log, created('1', 'a'));
    assert.is(await withTimeout(p.waitFor(position, GUARD_MS), GUARD_MS, 'waitFor(0)'), 'created');
    assert.ok(
      lines().some(
        (line) => line['msg'] === 'folding records handed over by the log failed; following the log for them',
      ),
    );
  },
);

projector('skips a followed record that a hand-off folded while it was being read', async (context) => {
  const held = heldBack(context.log);
  const p = new Projector({ log: held.log, logger: memoryLogger().logger, retryDelayMs: 10 });
  context.projector = p;
  p.start();
  await p.caughtUp();
  await appendEvent(context.log, created('1', 'a'));
  assert.equal(p.model.cursor, new Map([[0, 1]]));
  held.release();
  // The follow loop reads record 0 from the file (its cursor is a copy) and hands it on: skipped.
  await withTimeout(
    (async () => {
      while (held.followed() < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    })(),
    GUARD_MS,
    'the follow loop',
  );
  assert.equal(p.model.counts, { records: 1, voidEvents: 0, invalid: 0 });
});

projector(
  'leaves a handed-over record beyond its cursor to the follow loop, which folds all in order',
  async (context) => {
    await appendEvent(context.log, created('1', 'a'));
    const held = heldBack(context.log);
    const p = new Projector({ log: held.log, logger: memoryLogger().logger, retryDelayMs: 10 });
    context.projector = p;
    p.start();
    const position = await appendEvent(context.log, deleted('1'));
    // Record 0 is not folded yet, so record 1 must not be.
    assert.is(p.model.counts.records, 0);
    held.release();
    assert.is(await withTimeout(p.waitFor(position, GUARD_MS), GUARD_MS, 'waitFor(1)'), 'deleted');
    assert.equal(p.model.counts, { records: 2, voidEvents: 0, invalid: 0 });
    assert.is(p.model.reports.size, 0);
  },
);

projector.run();
