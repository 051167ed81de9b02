// The Kafka probe (src/log/kafka/probe.ts) on fakes: the partitions' leaders decide whether a round
// was answered; the topic's metadata, asked of a broker kafkajs picks at random (perhaps a paused
// one), is taken when it comes and never decides by its silence.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Admin, PartitionMetadata } from 'kafkajs';
import { BrokerReachability } from '../../../src/log/kafka/brokers.js';
import { KafkaHealth } from '../../../src/log/kafka/health.js';
import { startKafkaProbe } from '../../../src/log/kafka/probe.js';
import { WriteHealth } from '../../../src/log/kafka/write-health.js';
import { memoryLogger } from '../../helpers/server.js';

const INTERVAL_MS = 40;
const never = () => new Promise<never>(() => undefined);
const partitionsOf = (count: number, isr = [1, 2, 3]): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 1,
    replicas: [1, 2, 3],
    isr,
    offlineReplicas: [],
  }));

function probed(admin: Pick<Admin, 'fetchTopicMetadata'>, leadersAnswer: () => Promise<unknown>) {
  const { logger } = memoryLogger();
  const health = new KafkaHealth(logger, 'reports.events', new WriteHealth(3, 2500, 2));
  const stop = startKafkaProbe({
    admin: admin as Admin,
    topic: 'reports.events',
    partitions: 3,
    health,
    leadersAnswer,
    intervalMs: INTERVAL_MS,
    brokers: new BrokerReachability(logger),
    clientOf: () => {
      throw new Error('no broker is unreachable here');
    },
  });
  return { health, stop };
}

const rounds = (count: number) => new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * count));

const probe = suite('startKafkaProbe');

probe('metadata that never comes does not make an idle instance unavailable while the leaders answer', async () => {
  let asked = 0;
  const { health, stop } = probed(
    {
      fetchTopicMetadata: () => {
        asked += 1;
        return never();
      },
    },
    () => Promise.resolve(new Map([[0, 1]])),
  );
  try {
    await rounds(6);
    assert.equal(health.current(), { available: true });
    assert.is(asked, 1, 'one metadata request at a time');
  } finally {
    stop();
  }
});

probe('leaders that do not answer within the interval make an idle instance unavailable', async () => {
  const { health, stop } = probed({ fetchTopicMetadata: () => Promise.resolve({ topics: [] }) }, never);
  try {
    await rounds(4);
    const current = health.current();
    assert.is(current.available, false);
    assert.match(current.available ? '' : (current.reason ?? ''), /did not answer|unreachable|answer/i);
  } finally {
    stop();
  }
});

probe('metadata that comes late still applies: another partition count refuses writes', async () => {
  let answer: (metadata: Awaited<ReturnType<Admin['fetchTopicMetadata']>>) => void = () => undefined;
  const { health, stop } = probed({ fetchTopicMetadata: () => new Promise((resolve) => (answer = resolve)) }, () =>
    Promise.resolve(new Map()),
  );
  try {
    await rounds(3);
    health.checkWritable();
    answer({ topics: [{ name: 'reports.events', partitions: partitionsOf(4) }] });
    await rounds(1);
    assert.throws(() => health.checkWritable(), /changed from 3 to 4/);
  } finally {
    stop();
  }
});

probe('metadata that names no partition with enough replicas in sync makes an idle instance unavailable', async () => {
  const { health, stop } = probed(
    {
      fetchTopicMetadata: () =>
        Promise.resolve({
          topics: [
            {
              name: 'reports.events',
              partitions: partitionsOf(3, [1]),
            },
          ],
        }),
    },
    () => Promise.resolve(new Map()),
  );
  try {
    await rounds(3);
    const current = health.current();
    assert.is(current.available, false);
    assert.match(current.available ? '' : (current.reason ?? ''), /min\.insync\.replicas/);
  } finally {
    stop();
  }
});

probe.run();
