// Every couple of seconds: the topic's metadata (is the partition count still the one the history
// was written with; which partitions have a leader and enough replicas in sync) and the head
// offsets (for lag), and whether the cluster answered at all. Feeds KafkaHealth, then lets it log a
// change of availability.
import type { Admin, Kafka } from 'kafkajs';
import type { Cursor } from '../event-log.js';
import type { BrokerReachability } from './brokers.js';
import { ProbeSilenceError } from './errors.js';
import type { KafkaHealth } from './health.js';
import { countChanged } from './partition-count.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';

export interface KafkaProbeOptions {
  readonly admin: Admin;
  readonly topic: string;
  /** The partition count the history was written with. */
  readonly partitions: number;
  readonly health: KafkaHealth;
  readonly head: () => Promise<Cursor>;
  readonly intervalMs: number;
  readonly brokers: BrokerReachability;
  /** A client of one broker alone (same security settings), for asking whether it is back. */
  readonly clientOf: (broker: string) => Kafka;
}

/** Starts probing; returns the function that stops it. */
export function startKafkaProbe({
  admin,
  topic,
  partitions,
  health,
  head,
  intervalMs,
  brokers,
  clientOf,
}: KafkaProbeOptions): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const metadata = async () => {
    const topicMetadata = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0];
    health.refuseWrites(countChanged(topic, partitions, topicMetadata?.partitions.length ?? partitions));
    if (topicMetadata) health.writes.probed(topicMetadata.partitions);
  };
  const check = async () => {
    // The client retries for several seconds before it gives up; a cluster that does not answer
    // within the interval counts as unavailable now.
    let silence: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      silence = setTimeout(() => reject(new ProbeSilenceError(intervalMs)), intervalMs);
    });
    try {
      await Promise.race([Promise.all([head(), metadata()]), silent]);
      health.probeAnswered();
    } catch (error) {
      health.probeFailed(error);
    } finally {
      clearTimeout(silence);
    }
    health.report();
    // Not awaited: a paused broker takes a connection timeout to give up on, and recheck guards itself.
    void brokers.recheck((broker) => answersAlone(clientOf(broker), intervalMs));
    if (!stopped) timer = setTimeout(() => void check(), intervalMs);
  };
  // check() catches every failure itself: nothing is lost by not awaiting it.
  timer = setTimeout(() => void check(), intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Resolves when a client of one broker connects (its ApiVersions and Metadata answered) within `timeoutMs`; rejects otherwise. */
async function answersAlone(client: Kafka, timeoutMs: number): Promise<void> {
  const admin = client.admin();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      admin.connect(),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new ProbeSilenceError(timeoutMs)), timeoutMs)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
    await settleWithin(DISCONNECT_MS, admin.disconnect());
  }
}
