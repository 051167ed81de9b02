// Every couple of seconds: whether every partition's leader answers (its head, asked of the leaders
// the service's own view names, at most a second old: PartitionHeads.allHeads) and the topic's
// metadata (is the partition count still the one the history was written with; which partitions
// have a leader and enough replicas in sync). Feeds KafkaHealth, then lets it log a change of
// availability.
//
// Only the leaders' answers decide whether the probe was answered: they are whom a write needs. The
// probe once took the heads through the admin client, whose view of the leaders kafkajs refreshes
// every five minutes: after a paused leader's partitions were led again, it still asked the paused
// broker, and an instance that wrote nothing answered 503 until the client's request time-out (10 s)
// had passed after the election, or for the whole pause when it was shorter. The metadata is asked
// of a broker kafkajs picks at random, which may be the paused one: its answer is taken when it
// comes (within the client's request time-out per broker tried, 10 s), and its silence says nothing
// of the leaders.
import type { Admin, Kafka } from 'kafkajs';
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
  /** Resolves once every partition's leader gave its head. */
  readonly leadersAnswer: () => Promise<unknown>;
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
  leadersAnswer,
  intervalMs,
  brokers,
  clientOf,
}: KafkaProbeOptions): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** One metadata request out at a time: one that waits on a paused broker is not asked again meanwhile. */
  let metadataOut = false;
  const askMetadata = () => {
    if (metadataOut) return;
    metadataOut = true;
    admin
      .fetchTopicMetadata({ topics: [topic] })
      .then(({ topics: [topicMetadata] }) => {
        health.refuseWrites(countChanged(topic, partitions, topicMetadata?.partitions.length ?? partitions));
        if (topicMetadata) health.writes.probed(topicMetadata.partitions);
      })
      // Unanswered metadata is no verdict: the leaders' answers are (above).
      .catch(() => undefined)
      .finally(() => (metadataOut = false));
  };
  const check = async () => {
    const startedMs = performance.now();
    // The client retries for several seconds before it gives up; a cluster that does not answer
    // within the interval counts as unavailable now.
    let silence: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      silence = setTimeout(() => reject(new ProbeSilenceError(intervalMs)), intervalMs);
    });
    askMetadata();
    try {
      await Promise.race([leadersAnswer(), silent]);
      health.probeAnswered();
    } catch (error) {
      health.probeFailed(error);
    } finally {
      clearTimeout(silence);
    }
    health.report();
    // Not awaited: a paused broker takes a connection timeout to give up on, and recheck guards itself.
    void brokers.recheck((broker) => answersAlone(clientOf(broker), intervalMs));
    // A round every interval, counted from the start of the last: a round that waited out its whole
    // interval on a silent leader is followed at once, so an instance that writes nothing says 200
    // within a round of its leaders answering again (it once took a second silent interval more).
    if (!stopped) timer = setTimeout(() => void check(), Math.max(0, intervalMs - (performance.now() - startedMs)));
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
