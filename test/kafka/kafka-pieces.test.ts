// The pure pieces of the Kafka adapter: error classes, record sizes, partition checks, topic settings.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs from 'kafkajs';
import type { LogMessage } from '../../src/log/event-log.js';
import { isConnectivityFailure, KafkaRefusedError, ProbeSilenceError } from '../../src/log/kafka/errors.js';
import { countChanged, misplaced } from '../../src/log/kafka/partition-count.js';
import { BATCH_OVERHEAD_BYTES, groupBySize, maxRecordBytes } from '../../src/log/kafka/record-size.js';
import { checkTopicConfig, TopicSettingsError } from '../../src/log/kafka/topic.js';

const { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs;
const message = (bytes: number): LogMessage => ({ key: '1', value: Buffer.alloc(bytes - 1) });
const KEEP = new Map([
  ['retention.ms', '-1'],
  ['retention.bytes', '-1'],
  ['cleanup.policy', 'delete'],
]);

const errors = suite('kafka errors');

errors('a connection error, a silent probe and retries exhausted on one are outages', () => {
  const connection = new KafkaJSConnectionError('refused');
  assert.ok(isConnectivityFailure(connection));
  assert.ok(isConnectivityFailure(new ProbeSilenceError(2000)));
  assert.ok(isConnectivityFailure(new KafkaJSNumberOfRetriesExceeded(connection, { retryCount: 8, retryTime: 2000 })));
  assert.ok(isConnectivityFailure(new Error('socket hang up')));
});

errors('a non-retriable protocol error (a record too large) is a refusal, not an outage', () => {
  const tooLarge = new KafkaJSProtocolError(
    Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE', code: 10, retriable: false }),
  );
  assert.not.ok(isConnectivityFailure(tooLarge));
  assert.not.ok(isConnectivityFailure(new KafkaJSNumberOfRetriesExceeded(tooLarge, { retryCount: 0, retryTime: 0 })));
  const refused = new KafkaRefusedError(tooLarge);
  assert.is(refused.retriable, false);
  assert.is(refused.cause, tooLarge);
});

errors.run();

const sizes = suite('kafka record sizes');

sizes('appends are grouped so that each group fits in one batch, in order, an oversized one alone', () => {
  const limit = 1000;
  const appends = [[message(300)], [message(300)], [message(300)], [message(2000)], [message(10)]];
  const groups = groupBySize(appends, limit);
  assert.equal(
    groups.map((group) => group.length),
    [2, 1, 1, 1],
  );
  assert.equal(groups.flat(), appends);
  assert.is(maxRecordBytes(limit), limit - BATCH_OVERHEAD_BYTES);
  assert.equal(groupBySize([], limit), []);
});

sizes.run();

const partitions = suite('kafka partition checks');

partitions("a changed count and a record outside its key's partition are refusals naming the cause", () => {
  assert.is(countChanged('t', 3, 3), undefined);
  assert.match(countChanged('t', 3, 6)?.message ?? '', 'changed from 3 to 6');
  const record = { key: '7', value: Buffer.alloc(0), timestampMs: 0, position: { partition: 1, offset: 4 } };
  assert.is(misplaced('t', record, 1), undefined);
  assert.match(misplaced('t', record, 4)?.message ?? '', 'record 1:4 of topic t (key 7) belongs to partition 4');
});

partitions.run();

const settings = suite('kafka topic settings');

settings('a max.message.bytes too small for any event stops the start with the fix', () => {
  const tiny = new Map([...KEEP, ['max.message.bytes', '600']]);
  let error: unknown;
  try {
    checkTopicConfig('t', tiny, 1);
  } catch (caught) {
    error = caught;
  }
  assert.instance(error, TopicSettingsError);
  assert.match((error as Error).message, 'max.message.bytes=600');
});

settings('finite retention is refused; unset min.insync.replicas on a single replica gives no warning', () => {
  assert.throws(() => checkTopicConfig('t', new Map([...KEEP, ['retention.ms', '1000']]), 1), /retention\.ms=1000/);
  assert.equal(checkTopicConfig('t', KEEP, 1), { maxMessageBytes: 1048588, minInsyncReplicas: 1, warnings: [] });
});

settings("reports the topic's min.insync.replicas, which readiness checks the in-sync replicas against", () => {
  assert.is(checkTopicConfig('t', new Map([...KEEP, ['min.insync.replicas', '2']]), 3).minInsyncReplicas, 2);
});

settings('a min.insync.replicas above the replicas refuses a writer with the fix and warns a reader', () => {
  assert.throws(
    () => checkTopicConfig('t', new Map([...KEEP, ['min.insync.replicas', '3']]), 2),
    (error: unknown) =>
      error instanceof TopicSettingsError &&
      error.message.startsWith('topic t has 2 replicas but min.insync.replicas=3: Kafka would refuse every write') &&
      error.message.includes('--add-config min.insync.replicas=1'),
  );
  assert.is(checkTopicConfig('t', new Map([...KEEP, ['min.insync.replicas', '2']]), 2).minInsyncReplicas, 2);
  // A tool that only reads (verify, replay, migrate --to-file) is warned, and reads.
  const { warnings } = checkTopicConfig('t', new Map([...KEEP, ['min.insync.replicas', '3']]), 2, false);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', 'Kafka would refuse every write');
});

settings.run();
