// A sealed create whose event the log refused at the door (LogOverloadedError: too many appends
// waiting, nothing sent) leaves a key put before it (Kafka) that nothing uses: the event writer
// tells of it, so that it is destroyed now rather than at a later start's sweep. Other failures
// (a timeout, an unknown outcome) may have written the event: their key is kept.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ContentKey } from '../../src/keys/key-store.js';
import { AppendTimeoutError, LogOverloadedError, type EventLog } from '../../src/log/event-log.js';
import type { Projector } from '../../src/projector/projector.js';
import { createEventWriter } from '../../src/reports/event-writer.js';
import { createWriteTracing, defaultTracer } from '../../src/reports/tracing.js';
import { created } from '../helpers/events.js';

const key: ContentKey = {
  id: Buffer.from('0a0b', 'hex'),
  secret: Buffer.alloc(32, 1),
  contentDigest: Buffer.alloc(32, 2),
};

function writerRefusingWith(error: Error, told: ContentKey[]) {
  const log = { append: () => Promise.reject(error) } as unknown as EventLog;
  const projector = { encoded: { encode: () => Buffer.from('{}') } } as unknown as Projector;
  return createEventWriter({
    log,
    projector,
    tracing: createWriteTracing(defaultTracer()),
    clockMs: () => performance.now(),
    remaining: () => 1000,
    answerTo: (caught) => caught,
    onNeverAppended: (contentKey) => told.push(contentKey),
  });
}

const writer = suite('event writer: a refused append of a sealed create');

writer('tells of the key when the log refused the event before taking it', async () => {
  const told: ContentKey[] = [];
  const write = writerRefusingWith(new LogOverloadedError(20), told);
  const error = await write(created('7', 'x'), performance.now() + 1000, undefined, key).catch((e: unknown) => e);
  assert.instance(error, LogOverloadedError);
  assert.equal(told, [key]);
});

writer('keeps the key when the event may have been written (a time-out), and without a key says nothing', async () => {
  const told: ContentKey[] = [];
  const timedOut = writerRefusingWith(new AppendTimeoutError(1000), told);
  await timedOut(created('7', 'x'), performance.now() + 1000, undefined, key).catch(() => undefined);
  const refused = writerRefusingWith(new LogOverloadedError(20), told);
  await refused(created('8', 'y'), performance.now() + 1000, undefined).catch(() => undefined);
  assert.equal(told, []);
});

writer.run();
