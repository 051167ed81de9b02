// After a failed send, the next send goes out on a new producer (the old one's sequence numbers
// could make the broker drop it as a duplicate of the failed one), and the old producer is
// disconnected once its sends in flight have settled, not before. The broker's side of it is in
// test/kafka/faults.test.ts; here the producers are plain stand-ins that record what was asked.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProducerRecord, RecordMetadata } from 'kafkajs';
import { RenewingProducer, UnansweredPartitionsError, type Sender } from '../../../src/log/kafka/renewing-producer.js';

interface Pending {
  readonly record: ProducerRecord;
  resolve(metadata: RecordMetadata[]): void;
  reject(error: Error): void;
}

/** A producer whose sends wait until the test answers them. */
class HeldProducer implements Sender {
  readonly pending: Pending[] = [];
  connects = 0;
  disconnects = 0;
  constructor(readonly name: number) {}
  connect(): Promise<void> {
    this.connects += 1;
    return Promise.resolve();
  }
  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    return new Promise((resolve, reject) => this.pending.push({ record, resolve, reject }));
  }
  disconnect(): Promise<void> {
    this.disconnects += 1;
    return Promise.resolve();
  }
}

const record = (value: string): ProducerRecord => ({ topic: 't', messages: [{ value }] });
const written: RecordMetadata[] = [{ topicName: 't', partition: 0, errorCode: 0, baseOffset: '0' }];
const settled = () => new Promise((resolve) => setImmediate(resolve));

function renewing() {
  const made: HeldProducer[] = [];
  const renewedBy: unknown[] = [];
  const producer = new RenewingProducer<HeldProducer>({
    create: () => {
      const created = new HeldProducer(made.length);
      made.push(created);
      return created;
    },
    onRenewed: (error) => renewedBy.push(error),
  });
  return { producer, made, renewedBy };
}

const test = suite('a producer renewed after a failed send');

test('successful sends all go out on the first producer', async () => {
  const { producer, made } = renewing();
  await producer.connect();
  const first = producer.send(record('a'));
  await settled();
  made[0]?.pending[0]?.resolve(written);
  assert.equal(await first, written);
  const second = producer.send(record('b'));
  await settled();
  made[0]?.pending[1]?.resolve(written);
  await second;
  assert.is(made.length, 1);
  assert.is(producer.renewed(), 0);
});

test('after a failed send, the next goes out on a new, connected producer, and the failure is told', async () => {
  const { producer, made, renewedBy } = renewing();
  await producer.connect();
  const failing = producer.send(record('a'));
  await settled();
  const lost = new Error('connection closed');
  made[0]?.pending[0]?.reject(lost);
  assert.is(
    await failing.then(
      () => 'sent',
      () => 'failed',
    ),
    'failed',
  );
  const next = producer.send(record('b'));
  await settled();
  assert.is(made.length, 2);
  assert.is(made[1]?.connects, 1);
  assert.is(made[1]?.pending[0]?.record.messages[0]?.value, 'b');
  assert.is(made[0]?.pending.length, 1, 'nothing more was sent on the failed producer');
  made[1]?.pending[0]?.resolve(written);
  await next;
  assert.equal(renewedBy, [lost]);
  assert.is(producer.renewed(), 1);
});

test('the failed producer is disconnected only once its other sends in flight have settled', async () => {
  const { producer, made } = renewing();
  await producer.connect();
  const other = producer.send(record('other partition'));
  const failing = producer.send(record('a'));
  await settled();
  made[0]?.pending[1]?.reject(new Error('timed out'));
  assert.is(
    await failing.then(
      () => 'sent',
      () => 'failed',
    ),
    'failed',
  );
  await settled();
  assert.is(made[0]?.disconnects, 0, 'a send was still in flight on it');
  made[0]?.pending[0]?.resolve(written);
  assert.equal(await other, written);
  await settled();
  assert.is(made[0]?.disconnects, 1);
  assert.is(made.length, 2, 'one failure replaced it once');
});

test('a send kafkajs answers without one of its partitions renews the producer, and its answer is passed on as it came', async () => {
  const { producer, made, renewedBy } = renewing();
  await producer.connect();
  const toTwo: ProducerRecord = {
    topic: 't',
    messages: [
      { value: 'a', partition: 0 },
      { value: 'b', partition: 2 },
    ],
  };
  const skipped = producer.send(toTwo);
  await settled();
  // What kafkajs resolves when its metadata lists no leader for partition 2: that partition left out.
  const partial: RecordMetadata[] = [{ topicName: 't', partition: 0, errorCode: 0, baseOffset: '7' }];
  made[0]?.pending[0]?.resolve(partial);
  assert.is(await skipped, partial, 'the callers see partition 2 without an offset (positionsOf, offsetsOf)');
  const told = renewedBy[0];
  assert.ok(told instanceof UnansweredPartitionsError, 'the renewal is told why');
  assert.equal(told.partitions, [2]);
  const empty = producer.send({ topic: 't', messages: [{ value: 'c', partition: 1 }] });
  await settled();
  assert.is(made.length, 2, 'the next send goes out on a new producer');
  made[1]?.pending[0]?.resolve([]);
  assert.equal(await empty, []);
  assert.is(producer.renewed(), 2, 'an empty answer renews too');
});

test('an answer for every partition sent to is passed on as it came', async () => {
  const { producer, made } = renewing();
  await producer.connect();
  const sent = producer.send({
    topic: 't',
    messages: [
      { value: 'a', partition: 1 },
      { value: 'b', partition: 1 },
    ],
  });
  await settled();
  const answer: RecordMetadata[] = [{ topicName: 't', partition: 1, errorCode: 0, baseOffset: '3' }];
  made[0]?.pending[0]?.resolve(answer);
  assert.is(await sent, answer);
  assert.is(producer.renewed(), 0);
});

test('disconnect disconnects the producer in use and those still retiring', async () => {
  const { producer, made } = renewing();
  await producer.connect();
  void producer.send(record('held')).catch(() => undefined);
  const failing = producer.send(record('a'));
  await settled();
  made[0]?.pending[1]?.reject(new Error('timed out'));
  assert.is(
    await failing.then(
      () => 'sent',
      () => 'failed',
    ),
    'failed',
  );
  await producer.disconnect();
  assert.equal(
    made.map((each) => each.disconnects),
    [1, 1],
  );
});

test.run();
