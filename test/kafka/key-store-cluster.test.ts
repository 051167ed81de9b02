// The key store on a three-node cluster of its own: the key topic is created with the event
// topic's replicas, partition by partition (so the same preferred leader), a report's key lands in
// the key topic's partition of the same number as the report's events, and a paused broker holds
// only the key writes of the partitions it leads: puts and destroys of keys of reports on the other
// partitions go on while a put on its own partition waits (with one queue for the whole key topic,
// they all waited behind it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ITopicConfig } from 'kafkajs';
import type { ContentKey } from '../../src/keys/key-store.js';
import { AppendTimeoutError } from '../../src/log/event-log.js';
import { partitionOfKey } from '../../src/log/kafka/key-partition.js';
import { kafkaAvailable } from '../helpers/kafka-broker.js';
import { startCluster, type KafkaCluster } from '../helpers/kafka-cluster.js';
import { digestOf, openTestKeyStore } from '../helpers/kafka-keys.js';
import { uniqueTopic, withKafka } from '../helpers/kafka.js';
import { createTopicsSettled } from '../../src/log/kafka/topic.js';

/** Nodes on 29600, 29610, 29620 (+1 controller, +2 SASL): apart from the cluster fault suite's 28100. */
const WRITE_TIMEOUT_MS = 2000;
const EVENT_TOPIC_CONFIG = [
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
  { name: 'cleanup.policy', value: 'delete' },
];

/** A report id of each partition of three (the event topic's partitioner). */
const REPORT_OF_PARTITION = [0, 1, 2].map((partition) => {
  for (let id = 1; ; id += 1) if (partitionOfKey(String(id), 3) === partition) return String(id);
});

const failure = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  );

withKafka('key store on a cluster', () => {
  if (!kafkaAvailable()) return;
  const lanes = suite<{ cluster: KafkaCluster }>('kafka: the key store on a three-node cluster');

  lanes.before(async (context) => {
    // min.insync.replicas=1 for the unreplicated topics of the pause test (the cluster's default is 2).
    context.cluster = await startCluster({ name: 'keys-lanes', properties: { 'min.insync.replicas': '1' } });
  });
  lanes.after(async ({ cluster }) => {
    await cluster?.remove();
  });

  /** Creates the event topic of `keyTopic` (as kafka-keys.ts names it) with these replicas per partition. */
  const eventTopic = (cluster: KafkaCluster, keyTopic: string, replicas: number[][]) => {
    const topic: ITopicConfig = {
      topic: `${keyTopic}.events`,
      replicaAssignment: replicas.map((ids, partition) => ({ partition, replicas: ids })),
      configEntries: EVENT_TOPIC_CONFIG,
    };
    return cluster.withAdmin((admin) => createTopicsSettled(admin, { topics: [topic] }));
  };
  const replicasOf = async (cluster: KafkaCluster, topic: string) => {
    const metadata = await cluster.withAdmin((admin) => admin.fetchTopicMetadata({ topics: [topic] }));
    return (metadata.topics[0]?.partitions ?? [])
      .sort((a, b) => a.partitionId - b.partitionId)
      .map((partition) => partition.replicas);
  };
  const heads = (cluster: KafkaCluster, topic: string) =>
    cluster.withAdmin(async (admin) =>
      (await admin.fetchTopicOffsets(topic))
        .sort((a, b) => a.partition - b.partition)
        .map((entry) => Number(entry.high)),
    );

  lanes(
    "the key topic gets the event topic's replicas in their order, and each report's key lands in its report's partition",
    async ({ cluster }) => {
      const keyTopic = uniqueTopic('keys-assigned');
      const assignment = [
        [3, 1, 2],
        [1, 2, 3],
        [2, 3, 1],
      ];
      await eventTopic(cluster, keyTopic, assignment);
      const { store, logText } = await openTestKeyStore(
        cluster.brokers,
        keyTopic,
        { REPORTS_TOPIC_REPLICATION_FACTOR: '3' },
        { writeTimeoutMs: WRITE_TIMEOUT_MS },
      );
      try {
        assert.equal(await replicasOf(cluster, keyTopic), assignment);
        assert.not.match(logText(), /other replicas/);
        for (const [partition, reportId] of REPORT_OF_PARTITION.entries()) {
          const before = await heads(cluster, keyTopic);
          await store.put([store.mint(digestOf(`report ${reportId}`), { partitionKey: reportId })]);
          const grown = (await heads(cluster, keyTopic)).flatMap((head, p) => (head > (before[p] ?? 0) ? [p] : []));
          assert.equal(grown, [partition], `the key of report ${reportId}`);
        }
      } finally {
        await store.close();
      }
    },
  );

  lanes(
    "a paused broker holds the key writes of the partition it leads, and the other partitions' puts and destroys go on",
    async ({ cluster }) => {
      const keyTopic = uniqueTopic('keys-paused-leader');
      // Unreplicated, partition p on node p+1 alone: the paused node's partition gets no other leader.
      await eventTopic(cluster, keyTopic, [[1], [2], [3]]);
      const { store } = await openTestKeyStore(cluster.brokers, keyTopic, {}, { writeTimeoutMs: WRITE_TIMEOUT_MS });
      const mint = (partition: number, what: string) =>
        store.mint(digestOf(what), { partitionKey: REPORT_OF_PARTITION[partition] as string });
      try {
        const written = [0, 1, 2].map((partition) => mint(partition, `before ${partition}`));
        await store.put(written);
        cluster.pause(1);
        try {
          const started = performance.now();
          // Sent first: with one queue for the topic, the writes below waited behind these and timed out.
          const stuck = [
            failure(store.put([mint(0, 'during 0')], { timeoutMs: 4000 })),
            failure(store.destroy([(written[0] as ContentKey).id], { timeoutMs: 4000 })),
          ];
          for (const partition of [1, 2]) {
            await store.put([mint(partition, `during ${partition}`)], { timeoutMs: 4000 });
            await store.destroy([(written[partition] as ContentKey).id], { timeoutMs: 4000 });
          }
          const healthyMs = performance.now() - started;
          for (const write of stuck) assert.instance(await write, AppendTimeoutError);
          process.stdout.write(
            `  [partitions 1 and 2 took a put and a destroy each in ${healthyMs.toFixed(0)} ms while partition 0's leader was paused]\n`,
          );
        } finally {
          cluster.resume(1);
        }
        const after = mint(0, 'after');
        await store.put([after], { timeoutMs: 20_000 });
        assert.equal(await store.get(after.id), after);
      } finally {
        await store.close();
      }
    },
  );

  lanes.run();
});
