// The head reads' own view of who leads (leaders-view.ts), against brokers that answer, lag or never
// answer: no refresh waits on a silent broker, and the leader most brokers name is the one taken.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BrokerMetadata, Cluster } from 'kafkajs';
import { LeadersView, mostNamed, type Places } from '../../src/log/kafka/leaders-view.js';

const TOPIC = 'reports';

/** One partition's place per broker's word: partition -> leader, replicas 1, 2, 3. */
const places = (leaders: Record<number, number>): Places =>
  new Map(Object.entries(leaders).map(([partition, leader]) => [Number(partition), { leader, replicas: [1, 2, 3] }]));

function metadataOf(leaders: Record<number, number>): BrokerMetadata {
  return {
    brokers: [],
    topicMetadata: [
      {
        topic: TOPIC,
        topicErrorCode: 0,
        partitionMetadata: Object.entries(leaders).map(([partition, leader]) => ({
          partitionId: Number(partition),
          leader,
          replicas: [1, 2, 3],
          isr: [1, 2, 3],
          partitionErrorCode: 0,
        })),
      },
    ],
  };
}

/**
 * A cluster whose brokers' metadata answers `answer(node)` gives (a promise never settled: a paused
 * broker); kafkajs' own view names `theirs` (partition -> leader, replicas 1-3 unless `replicas`).
 */
function fakeCluster(
  answer: (node: number) => Promise<BrokerMetadata>,
  theirs: Record<number, number>,
  replicas: () => number[] = () => [1, 2, 3],
) {
  const asked: number[] = [];
  const cluster = {
    refreshMetadataIfNecessary: () => Promise.resolve(),
    findTopicPartitionMetadata: () =>
      (metadataOf(theirs).topicMetadata[0]?.partitionMetadata ?? []).map((entry) => ({
        ...entry,
        replicas: replicas(),
      })),
    findBroker: ({ nodeId }: { nodeId: string }) =>
      Promise.resolve({
        metadata: () => {
          asked.push(Number(nodeId));
          return answer(Number(nodeId));
        },
      }),
  };
  return { cluster: cluster as unknown as Cluster, asked };
}

const never = () => new Promise<BrokerMetadata>(() => undefined);
/** Refreshed only when a test asks (`outdated`) or before the first answer. */
const view = (minSpacingMs = 0) =>
  new LeadersView({ topic: TOPIC, maxAgeMs: 60_000, answersWindowMs: 50, minSpacingMs });

const leaders = suite("kafka: the head reads' view of the leaders");

leaders("the leader most brokers name is taken, the earliest answer's among equals", () => {
  const named = mostNamed([places({ 0: 1, 1: 2 }), places({ 0: 3, 1: 2 }), places({ 0: 3, 1: 1 })]);
  assert.equal(
    [...named].map(([partition, place]) => [partition, place.leader]),
    [
      [0, 3],
      [1, 2],
    ],
  );
  assert.is(mostNamed([places({ 0: 2 }), places({ 0: 3 })]).get(0)?.leader, 2);
});

leaders('a broker that never answers does not hold a refresh, and is not asked again until it answers', async () => {
  // Broker 1 led partition 0 and is paused; brokers 2 and 3 say 2 leads it now.
  const { cluster, asked } = fakeCluster((node) => (node === 1 ? never() : Promise.resolve(metadataOf({ 0: 2 }))), {
    0: 1,
  });
  const leadersView = view();
  const first = await leadersView.current(cluster);
  assert.is(first.get(0)?.leader, 2);
  await leadersView.outdated(cluster);
  await leadersView.outdated(cluster);
  assert.equal(
    asked.filter((node) => node === 1),
    [1],
    'the silent broker was asked once',
  );
  assert.equal(asked.filter((node) => node !== 1).sort(), [2, 2, 2, 3, 3, 3]);
});

leaders('a broker still naming a deposed leader is outvoted by the others, although it answered first', async () => {
  const { cluster } = fakeCluster(
    (node) =>
      node === 1
        ? Promise.resolve(metadataOf({ 0: 1 }))
        : new Promise((resolve) => setTimeout(() => resolve(metadataOf({ 0: 3 })), 5)),
    { 0: 1 },
  );
  assert.is((await view().current(cluster)).get(0)?.leader, 3);
});

leaders('a refresh that no broker answers fails, and the view it had stays', async () => {
  let down = false;
  const { cluster } = fakeCluster(
    () => (down ? Promise.reject(new Error('connection refused')) : Promise.resolve(metadataOf({ 0: 2 }))),
    { 0: 2 },
  );
  const leadersView = view();
  assert.is((await leadersView.current(cluster)).get(0)?.leader, 2);
  down = true;
  const failed = await leadersView.outdated(cluster).then(
    () => 'refreshed',
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  assert.is(failed, 'connection refused');
  assert.is(leadersView.known(cluster).get(0)?.leader, 2);
});

leaders(
  'refreshes that fail are spaced as those that answer: reads failing fast do not flood the brokers',
  async () => {
    // Every answer fails at once, as kafkajs' parse of a metadata answer does while one partition has no leader.
    const { cluster, asked } = fakeCluster(() => Promise.reject(new Error('LEADER_NOT_AVAILABLE')), { 0: 1 });
    const leadersView = new LeadersView({ topic: TOPIC, maxAgeMs: 1000, answersWindowMs: 50, minSpacingMs: 100 });
    const until = performance.now() + 300;
    while (performance.now() < until) {
      leadersView.known(cluster);
      await leadersView.outdated(cluster).catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Three brokers a refresh, one refresh per 100 ms at most: 300 ms give at most four.
    assert.ok(asked.length > 0 && asked.length <= 12, `${asked.length} metadata requests in 300 ms`);
  },
);

leaders("brokers that replaced those the view names are found through kafkajs' own view", async () => {
  // The view knows brokers 1-3 (1 leads); then they are gone, and kafkajs' view (refreshed beside
  // each refresh) names 4-6, which say 5 leads.
  let replaced = false;
  const { cluster } = fakeCluster(
    (node) => {
      if (node > 3) return Promise.resolve(metadataOf({ 0: 5 }));
      return replaced ? Promise.reject(new Error(`broker ${node} not found`)) : Promise.resolve(metadataOf({ 0: 1 }));
    },
    { 0: 1 },
    () => (replaced ? [4, 5, 6] : [1, 2, 3]),
  );
  const leadersView = view();
  assert.is((await leadersView.current(cluster)).get(0)?.leader, 1);
  replaced = true;
  await leadersView.outdated(cluster);
  assert.is(leadersView.known(cluster).get(0)?.leader, 5);
});

leaders('a closed view asks no broker', async () => {
  const { cluster, asked } = fakeCluster(() => Promise.resolve(metadataOf({ 0: 2 })), { 0: 2 });
  const leadersView = view();
  leadersView.close();
  assert.equal([...leadersView.known(cluster)], []);
  const failed = await leadersView.current(cluster).then(
    () => 'answered',
    () => 'refused',
  );
  assert.is(failed, 'refused');
  assert.equal(asked, []);
});

leaders.run();
