// The behaviour every EventLog adapter owes the service, checked through the port only. Each
// adapter's test file calls `eventLogContract` with a factory that opens a fresh log.
//
// Adapter-agnostic on purpose: partitions may be any numbers (Kafka), and a fresh log's offsets
// are learnt from head(), never assumed to be 0. `dispose` must work after the test closed the log.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  LogUnavailableError,
  type Cursor,
  type EventLog,
  type LogMessage,
  type LogPosition,
  type LogRecord,
} from '../../src/log/event-log.js';
import { collect, deferred, rejection, withTimeout } from '../helpers/async.js';
import { followRecords, readRecords } from '../../src/log/record-batches.js';
import { activeResources, untilNoMoreThan } from '../helpers/resources.js';

export interface OpenedLog {
  readonly log: EventLog;
  dispose(): Promise<void>;
}

/** How long a single wait on the log may take before the test fails instead of hanging. */
const GUARD_MS = 15_000;

const at = ({ partition, offset }: LogPosition) => `${partition}:${offset}`;
const message = (key: string, value: string | Buffer): LogMessage => ({
  key,
  value: Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'),
});

/** Every byte value, so a value that does not survive as raw bytes (e.g. through a UTF-8 string) is caught. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function assertSameRecord(actual: LogRecord | undefined, expected: LogMessage, position: LogPosition): void {
  assert.ok(actual, `no record read back at ${at(position)}`);
  assert.equal(actual.position, position);
  assert.is(actual.key, expected.key);
  assert.ok(Buffer.isBuffer(actual.value), 'value is a Buffer');
  assert.ok(actual.value.equals(expected.value), `value at ${at(position)} differs`);
  assert.type(actual.timestampMs, 'number');
}

/** Records keyed by position; fails if one position is read twice. */
function byPosition(records: readonly LogRecord[]): Map<string, LogRecord> {
  const map = new Map<string, LogRecord>();
  for (const record of records) {
    assert.not.ok(map.has(at(record.position)), `position ${at(record.position)} was read twice`);
    map.set(at(record.position), record);
  }
  return map;
}

/** Offsets of each partition must come in strictly increasing order. */
function assertOrderedPerPartition(records: readonly LogRecord[]): void {
  const last = new Map<number, number>();
  for (const { position } of records) {
    const previous = last.get(position.partition);
    assert.ok(
      previous === undefined || position.offset > previous,
      `offset ${position.offset} after ${previous} in partition ${position.partition}`,
    );
    last.set(position.partition, position.offset);
  }
}

function countsByPartition(positions: readonly LogPosition[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const { partition } of positions) counts.set(partition, (counts.get(partition) ?? 0) + 1);
  return counts;
}

async function appendEach(log: EventLog, messages: readonly LogMessage[]): Promise<LogPosition[]> {
  const positions: LogPosition[] = [];
  for (const m of messages) positions.push(...(await log.append([m])));
  return positions;
}

export function eventLogContract(name: string, open: () => Promise<OpenedLog>): void {
  const contract = suite<{ opened?: OpenedLog; log: EventLog; start: Cursor }>(`${name} EventLog contract`);

  contract.before.each(async (context) => {
    context.opened = await withTimeout(open(), GUARD_MS * 2, `opening the ${name} log`);
    context.log = context.opened.log;
    context.start = await context.log.head();
  });
  contract.after.each(async (context) => {
    await context.opened?.dispose();
    context.opened = undefined;
  });

  contract("append returns one position per message, in order, in the key's partition", async ({ log }) => {
    const positions = await log.append([message('7', 'a'), message('7', 'b'), message('7', 'c')]);
    assert.is(positions.length, 3);
    const [first, second, third] = positions as [LogPosition, LogPosition, LogPosition];
    assert.is(second.partition, first.partition);
    assert.is(third.partition, first.partition);
    assert.ok(first.offset < second.offset && second.offset < third.offset, `offsets ${positions.map(at).join(', ')}`);
    const [later] = (await log.append([message('7', 'd')])) as [LogPosition];
    assert.is(later.partition, first.partition);
    assert.ok(later.offset > third.offset);
  });

  contract('append puts every message of one key in one partition with increasing offsets', async ({ log }) => {
    const keys = ['1', '-1', '42', '9223372036854775807', '-9223372036854775808', '1000', '31337', '0'];
    const messages = [1, 2, 3].flatMap((round) => keys.map((key) => message(key, `${key}#${round}`)));
    const positions = await appendEach(log, messages);
    const partitionOf = new Map<string, number>();
    const lastOffset = new Map<number, number>();
    messages.forEach(({ key }, i) => {
      const position = positions[i] as LogPosition;
      assert.is(partitionOf.get(key) ?? position.partition, position.partition, `key ${key} changed partition`);
      partitionOf.set(key, position.partition);
      assert.ok(
        position.offset > (lastOffset.get(position.partition) ?? -1),
        `offset ${at(position)} did not increase`,
      );
      lastOffset.set(position.partition, position.offset);
    });
  });

  contract('read from an empty cursor returns everything appended, keys and values byte-exact', async ({ log }) => {
    const messages = [
      message('5', '{"json":true}'),
      message('-5', ALL_BYTES),
      message('5', 'ünïcödé ☃ 🚀'),
      message('12', Buffer.alloc(70_000, 0x5a)),
    ];
    const positions = await log.append(messages);
    const read = await withTimeout(collect(readRecords(log, new Map())), GUARD_MS, 'read() to end');
    assertOrderedPerPartition(read);
    const found = byPosition(read);
    messages.forEach((m, i) =>
      assertSameRecord(found.get(at(positions[i] as LogPosition)), m, positions[i] as LogPosition),
    );
  });

  contract('read from the head at open returns exactly the records appended since', async ({ log, start }) => {
    const messages = ['1', '2', '3', '4'].map((key) => message(key, `v${key}`));
    const positions = await appendEach(log, messages);
    const read = await withTimeout(collect(readRecords(log, start)), GUARD_MS, 'read() to end');
    assert.is(read.length, messages.length);
    const found = byPosition(read);
    messages.forEach((m, i) =>
      assertSameRecord(found.get(at(positions[i] as LogPosition)), m, positions[i] as LogPosition),
    );
  });

  contract('read from a mid cursor returns only the records after it', async ({ log }) => {
    const messages = [0, 1, 2, 3, 4, 5].map((i) => message('77', `record ${i}`));
    const positions = await log.append(messages);
    const middle = positions[3] as LogPosition;
    const cursor = new Map(await log.head());
    cursor.set(middle.partition, middle.offset);
    const read = await withTimeout(collect(readRecords(log, cursor)), GUARD_MS, 'read() to end');
    assert.equal(
      read.map((r) => r.value.toString('utf8')),
      ['record 3', 'record 4', 'record 5'],
    );
    assert.equal(
      read.map((r) => r.position),
      positions.slice(3),
    );
  });

  contract('read ends at the head seen when it started', async ({ log, start }) => {
    await log.append([message('3', 'before 1'), message('3', 'before 2'), message('3', 'before 3')]);
    const iterator = readRecords(log, start)[Symbol.asyncIterator]();
    const values: string[] = [];
    const first = await withTimeout(iterator.next(), GUARD_MS, 'the first record of read()');
    if (!first.done) values.push(first.value.value.toString('utf8'));
    await log.append([message('3', 'after 1'), message('3', 'after 2')]);
    for (;;) {
      const next = await withTimeout(iterator.next(), GUARD_MS, 'read() to end');
      if (next.done) break;
      values.push(next.value.value.toString('utf8'));
    }
    assert.equal(values, ['before 1', 'before 2', 'before 3']);
  });

  contract('read of an empty range ends at once', async ({ log }) => {
    await log.append([message('8', 'x')]);
    assert.equal(await withTimeout(collect(readRecords(log, await log.head())), GUARD_MS, 'read() at the head'), []);
  });

  contract('head moves by the number of records appended to each partition', async ({ log, start }) => {
    const messages = ['10', '11', '12', '10', '10', '13'].map((key, i) => message(key, `h${i}`));
    const positions = await log.append(messages);
    const head = await log.head();
    const appended = countsByPartition(positions);
    for (const partition of new Set([...start.keys(), ...head.keys(), ...appended.keys()])) {
      const moved = (head.get(partition) ?? 0) - (start.get(partition) ?? 0);
      assert.is(moved, appended.get(partition) ?? 0, `partition ${partition}`);
    }
    for (const position of positions)
      assert.ok((head.get(position.partition) ?? 0) > position.offset, `head passed ${at(position)}`);
  });

  contract('follow yields the existing records, then new ones, and stops on abort', async ({ log, start }) => {
    const existing = await log.append([message('21', 'old 1'), message('21', 'old 2')]);
    const controller = new AbortController();
    const seen: LogRecord[] = [];
    const sawExisting = deferred();
    const sawNew = deferred();
    const following = (async () => {
      for await (const record of followRecords(log, start, { signal: controller.signal })) {
        seen.push(record);
        if (seen.length === 2) sawExisting.resolve();
        if (seen.length === 4) sawNew.resolve();
      }
    })();
    following.catch((error: unknown) => {
      sawExisting.reject(error);
      sawNew.reject(error);
    });
    await withTimeout(sawExisting.promise, GUARD_MS, 'follow() to yield the existing records');
    const added = await log.append([message('21', 'new 1'), message('21', 'new 2')]);
    await withTimeout(sawNew.promise, GUARD_MS, 'follow() to yield the records appended later');
    // Abort while follow() waits for records that will never come: it must end, not hang.
    controller.abort();
    await withTimeout(following, GUARD_MS, 'follow() to end after abort');
    assert.equal(
      seen.map((r) => r.value.toString('utf8')),
      ['old 1', 'old 2', 'new 1', 'new 2'],
    );
    assert.equal(
      seen.map((r) => r.position),
      [...existing, ...added],
    );
  });

  contract('follow with an aborted signal yields nothing and ends', async ({ log, start }) => {
    await log.append([message('22', 'x')]);
    const controller = new AbortController();
    controller.abort();
    assert.equal(
      await withTimeout(
        collect(followRecords(log, start, { signal: controller.signal })),
        GUARD_MS,
        'follow() with an aborted signal',
      ),
      [],
    );
  });

  contract(
    'reads and follows, ended or aborted, leave no socket, timer or fetch loop behind',
    async ({ log, start }) => {
      // Records in several partitions (on Kafka), so several fetch loops start together on one broker.
      await log.append(['31', '32', '33', '34', '35', '36'].map((key) => message(key, `kept ${key}`)));
      // Once, so what the log opens for good (the first read's connections) is counted as before.
      await withTimeout(collect(readRecords(log, start)), GUARD_MS, 'a first read');
      const before = activeResources();
      for (let round = 0; round < 10; round += 1) {
        await withTimeout(collect(readRecords(log, start)), GUARD_MS, 'a read to its end');
        // A follow left after its first record, and one aborted while it waits at the head.
        for await (const _record of followRecords(log, start)) break;
        const controller = new AbortController();
        const following = collect(followRecords(log, await log.head(), { signal: controller.signal }));
        setTimeout(() => controller.abort(), round * 20);
        await withTimeout(following, GUARD_MS, 'an aborted follow to end');
      }
      await untilNoMoreThan(before);
    },
  );

  contract('gives 64 concurrent appenders distinct positions and reads every record back', async ({ log, start }) => {
    const callers = 64;
    const perCaller = 4;
    const results = await Promise.all(
      Array.from({ length: callers }, async (_, caller) => {
        const sent: LogMessage[] = [];
        const positions: LogPosition[] = [];
        for (let i = 0; i < perCaller; i += 1) {
          // Half the callers share keys, so appends to one partition interleave.
          const m = message(String(caller % 2 === 0 ? caller % 8 : 1000 + caller), `caller ${caller} append ${i}`);
          sent.push(m);
          positions.push(...(await log.append([m])));
        }
        return { sent, positions };
      }),
    );
    const all = results.flatMap(({ sent, positions }) =>
      sent.map((m, i) => ({ m, position: positions[i] as LogPosition })),
    );
    assert.is(new Set(all.map(({ position }) => at(position))).size, callers * perCaller, 'positions are distinct');
    const read = await withTimeout(collect(readRecords(log, start)), GUARD_MS, 'read() of the concurrent appends');
    assert.is(read.length, callers * perCaller);
    assertOrderedPerPartition(read);
    const found = byPosition(read);
    for (const { m, position } of all) assertSameRecord(found.get(at(position)), m, position);
  });

  contract('append with an already aborted signal rejects and appends nothing', async ({ log, start }) => {
    const controller = new AbortController();
    controller.abort();
    await rejection(log.append([message('23', 'given up')], { signal: controller.signal }));
    assert.equal(await withTimeout(collect(readRecords(log, start)), GUARD_MS, 'read() after the aborted append'), []);
  });

  contract('stats() counts every appended record and at least one flush', async ({ log }) => {
    const before = log.stats();
    await log.append([message('24', 'a'), message('25', 'b')]);
    await log.append([message('24', 'c')]);
    const after = log.stats();
    assert.is(after.appends - before.appends, 3);
    assert.ok(
      after.flushes - before.flushes >= 1 && after.flushes - before.flushes <= 3,
      `flushes ${before.flushes} -> ${after.flushes}`,
    );
  });

  contract('health() says available while open', ({ log }) => {
    assert.equal(log.health().available, true);
  });

  contract('close() rejects later appends with LogUnavailableError', async ({ log }) => {
    await log.append([message('30', 'before close')]);
    await log.close();
    const error = await rejection(log.append([message('30', 'after close')]));
    assert.instance(error, LogUnavailableError);
  });

  contract.run();
}
