// A kafkajs cluster (connections, metadata, per-broker requests) without a consumer group: the
// follower's fetch loops and the per-partition head reads ask each partition's leader alone, so a
// paused broker holds only the partitions it leads.
import type { Cluster, Kafka } from 'kafkajs';
import type { BrokerReachability } from './brokers.js';

/**
 * The kafkajs cluster (connections, metadata) of a consumer that never joins a group: kafkajs hands
 * a consumer's cluster to its partition assigners, the one public way to have one.
 */
export function groupFreeCluster(kafka: Kafka, brokers: BrokerReachability | undefined): Cluster {
  let cluster: Cluster | undefined;
  const consumer = kafka.consumer({
    groupId: 'report-store-follow-never-joins',
    // Metadata at most a second old when a fetch fails: a moved leader is found at the next try.
    metadataMaxAge: 1000,
    partitionAssigners: [
      (config) => {
        cluster = config.cluster;
        return {
          name: 'never-joins',
          version: 0,
          assign: () => Promise.resolve([]),
          protocol: () => ({ name: 'never-joins', metadata: Buffer.alloc(0) }),
        };
      },
    ],
  });
  brokers?.watch(consumer);
  if (cluster === undefined) throw new Error('kafkajs gave the partition assigner no cluster');
  return cluster;
}
