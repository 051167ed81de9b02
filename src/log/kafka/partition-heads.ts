// The head (high watermark) of one partition, asked of that partition's leader alone; and every
// partition's head at once (allHeads: the log's head and the Kafka probe). The admin's
// fetchTopicOffsets asks every leader and waits for all: with one leader paused, a create or delete
// on any partition that must first catch up with other writers waited on the paused broker, past
// its write timeout.
//
// Every head read is confirmed by the partition's other replicas (leader-confirmation.ts): a leader
// cut off from them answers with a head that no longer moves. `allHeads` (every partition at once,
// one request per leader: the log's head and the Kafka probe) is not confirmed, as the admin's was
// not, but asks the leaders this view names.
import type { Broker, Cluster, Kafka } from 'kafkajs';
import { confirmLeader, DeposedLeaderError } from './leader-confirmation.js';
import { sharedRead } from '../batcher.js';
import { groupFreeCluster } from './group-free-cluster.js';
import type { BrokerReachability } from './brokers.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';

export interface PartitionHeadsOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly partitions: number;
  readonly brokers?: BrokerReachability;
  /** Callers that may wait for one partition's next read (REPORTS_MAX_PENDING_APPENDS). */
  readonly maxPending?: number;
  /** The topic's min.insync.replicas: replicas - it of the others must confirm a leader (leader-confirmation.ts; 1 when not given). */
  readonly minInsyncReplicas?: number;
}

/** Reads of a head a moved leadership may take (each after the metadata is refreshed). */
const DEPOSED_READS = 3;

/** How long a replica that did not answer a leader confirmation is counted as not answering, unasked. */
const SILENT_REPLICA_MS = 1000;

/** How often the leaders' view is refreshed at most (the follower's and the producer's metadata age alike). */
const LEADERS_MAX_AGE_MS = 1000;

export class PartitionHeads {
  private cluster: Promise<Cluster> | undefined;
  /** The cluster once connected, for the leaders' view (read synchronously). */
  private ready: Cluster | undefined;
  /** Per replica (node id), until when it counts as not answering (monotonic milliseconds). */
  private readonly silentUntilMs = new Map<number, number>();
  /** On the monotonic clock (performance.now()), which starts near 0 with the process. */
  private leadersRefreshedMs = Number.NEGATIVE_INFINITY;
  private closed = false;
  /** Per partition: concurrent callers share one request, and a caller never gets a head read before it asked. */
  private readonly reads: (() => Promise<number>)[];

  constructor(private readonly options: PartitionHeadsOptions) {
    const shared = options.maxPending === undefined ? {} : { maxPending: options.maxPending };
    this.reads = Array.from({ length: options.partitions }, (_, partition) =>
      sharedRead(() => this.read(partition), shared),
    );
  }

  /** The offset the partition's next record gets. */
  head(partition: number): Promise<number> {
    const read = this.reads[partition];
    if (read === undefined)
      throw new RangeError(`partition ${partition} is not one of the topic's ${this.options.partitions}`);
    return read();
  }

  /**
   * Every partition's head, each from its leader as the leaders' view (at most a second old) names
   * it, one request per leader, unconfirmed (as an admin client's would be): what the probe and
   * the log's `head()` ask. Not shared with `head`'s callers, so their cap never refuses it. The
   * admin client's own view of the leaders is refreshed every five minutes: after a paused leader's
   * partitions had new leaders, its reads kept waiting on the paused broker.
   */
  async allHeads(): Promise<Map<number, number>> {
    const cluster = await this.connected();
    const { partitions } = this.options;
    try {
      // Refreshed beside the read, not before it: a refresh asks one broker kafkajs picks at random,
      // perhaps a paused one that leads nothing any more, and waiting on it held the read for the
      // client's time-out. A read that asked a moved leader fails, and the refresh below finds the
      // new one for the next read.
      cluster.refreshMetadataIfNecessary().catch(() => undefined);
      return await this.headsFromLeaders(
        cluster,
        Array.from({ length: partitions }, (_, partition) => partition),
      );
    } catch (error) {
      // A leader may have moved: the next read asks the new one.
      if (!this.closed) await cluster.refreshMetadata().catch(() => undefined);
      throw error;
    }
  }

  /** Connects in the background, so that `leaderOf` knows the leaders soon after the start. */
  warm(): void {
    this.connected().catch(() => undefined);
  }

  /** The node id of the partition's leader as last seen, or undefined while not known. */
  leaderOf(partition: number): number | undefined {
    const cluster = this.ready;
    if (cluster === undefined) return undefined;
    const now = performance.now();
    if (now - this.leadersRefreshedMs >= LEADERS_MAX_AGE_MS) {
      this.leadersRefreshedMs = now;
      cluster.refreshMetadataIfNecessary().catch(() => undefined);
    }
    try {
      const [leader] = Object.keys(cluster.findLeaderForPartitions(this.options.topic, [partition]));
      return leader === undefined ? undefined : Number(leader);
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const cluster = this.cluster;
    this.cluster = undefined;
    this.ready = undefined;
    if (cluster)
      await settleWithin(
        DISCONNECT_MS,
        cluster.then((c) => c.disconnect()),
      );
  }

  private connected(): Promise<Cluster> {
    // A read queued behind one in flight at close would otherwise connect again, and nothing would
    // disconnect it.
    if (this.closed) return Promise.reject(new Error('the partition heads are closed'));
    if (this.cluster === undefined) {
      const cluster = groupFreeCluster(this.options.kafka, this.options.brokers);
      const connecting = (async () => {
        await cluster.connect();
        await cluster.addTargetTopic(this.options.topic);
        // Closed meanwhile: close() disconnects it once this resolves; nothing may refresh through it.
        if (!this.closed) this.ready = cluster;
        return cluster;
      })();
      // A failed connect is tried again by the next caller, on a cluster of its own: this one's
      // connections (the topic's metadata may have failed after they opened) are closed.
      connecting.catch(() => {
        if (this.cluster === connecting) this.cluster = undefined;
        void settleWithin(DISCONNECT_MS, cluster.disconnect());
      });
      this.cluster = connecting;
    }
    return this.cluster;
  }

  /**
   * The head, read again (metadata refreshed) when the broker it came from no longer leads: while a
   * leadership moves (a clean restart, an election) the first read often asks the old leader, and
   * one more read asks the new one, where failing would answer 503 for nothing.
   */
  private async read(partition: number): Promise<number> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.readOnce(partition);
      } catch (error) {
        if (!(error instanceof DeposedLeaderError) || attempt >= DEPOSED_READS) throw error;
      }
    }
  }

  private async readOnce(partition: number): Promise<number> {
    const cluster = await this.connected();
    const { topic } = this.options;
    try {
      await cluster.refreshMetadataIfNecessary();
      const metadata = cluster.findTopicPartitionMetadata(topic).find((entry) => entry.partitionId === partition);
      const leader = metadata?.leader;
      // The head and the other replicas' word at once: no round trip more than before.
      const confirmed =
        leader === undefined || metadata === undefined
          ? undefined
          : confirmLeader({
              partition,
              leader,
              replicas: metadata.replicas,
              minInsyncReplicas: this.options.minInsyncReplicas ?? 1,
              leaderNamedBy: (replica) => this.leaderNamedBy(cluster, replica, partition),
            });
      const [offset] = await Promise.all([this.headFromLeader(cluster, partition), confirmed]);
      return offset;
    } catch (error) {
      // The leader may have moved: the next read asks the new one.
      if (!this.closed) await cluster.refreshMetadata().catch(() => undefined);
      throw error;
    }
  }

  private async headFromLeader(cluster: Cluster, partition: number): Promise<number> {
    const heads = await this.headsFromLeaders(cluster, [partition]);
    return heads.get(partition) ?? -1;
  }

  /** The heads of `partitions`, one request per leader the cluster's view names; throws when one is missing. */
  private async headsFromLeaders(cluster: Cluster, partitions: readonly number[]): Promise<Map<number, number>> {
    const [answer] = await cluster.fetchTopicsOffset([
      { topic: this.options.topic, partitions: partitions.map((partition) => ({ partition })), fromBeginning: false },
    ]);
    const heads = new Map((answer?.partitions ?? []).map(({ partition, offset }) => [partition, Number(offset)]));
    for (const partition of partitions) {
      const head = heads.get(partition);
      if (head === undefined || !Number.isSafeInteger(head) || head < 0)
        throw new Error(`Kafka gave no head offset for partition ${partition}`);
    }
    return heads;
  }

  /** The leader of `partition` as broker `nodeId` knows it (-1: none). */
  private async leaderNamedBy(cluster: Cluster, nodeId: number, partition: number): Promise<number> {
    // A replica that did not answer lately is not asked again for a while: kafkajs refreshes the
    // whole cluster's metadata before it gives up on a broker that is down, at every head read.
    const nowMs = performance.now();
    if ((this.silentUntilMs.get(nodeId) ?? 0) > nowMs) throw new Error(`broker ${nodeId} did not answer lately`);
    try {
      const broker: Broker = await cluster.findBroker({ nodeId: String(nodeId) });
      const { topicMetadata } = await broker.metadata([this.options.topic]);
      const entry = topicMetadata
        .find((each) => each.topic === this.options.topic)
        ?.partitionMetadata.find((each) => each.partitionId === partition);
      this.silentUntilMs.delete(nodeId);
      return entry?.leader ?? -1;
    } catch (error) {
      this.silentUntilMs.set(nodeId, performance.now() + SILENT_REPLICA_MS);
      throw error;
    }
  }
}
