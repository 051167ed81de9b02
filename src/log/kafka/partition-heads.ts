// The head (high watermark) of one partition, asked of that partition's leader alone; and every
// partition's head at once (allHeads: the log's head and the Kafka probe). The admin's
// fetchTopicOffsets asks every leader and waits for all: with one leader paused, a create or delete
// on any partition that must first catch up with other writers waited on the paused broker, past
// its write timeout.
//
// Every head read is confirmed by the partition's other replicas (leader-confirmation.ts): a leader
// cut off from them answers with a head that no longer moves. `allHeads` (every partition at once,
// one request per leader: the log's head and the Kafka probe) is not confirmed, as the admin's was
// not, but asks the leaders this view names. Who leads is this class's own view of the leaders
// (leaders-view.ts), asked of every broker at once, never of one kafkajs picks and waits on.
import type { Broker, Cluster, Kafka } from 'kafkajs';
import { confirmLeader, DeposedLeaderError } from './leader-confirmation.js';
import { sharedRead } from '../batcher.js';
import { groupFreeCluster } from './group-free-cluster.js';
import type { BrokerReachability } from './brokers.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';
import { leadersViewOf, type LeadersView, type Places } from './leaders-view.js';
import { listHeads } from './list-heads.js';

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

/** Errors of a broker asked about a partition it does not lead (kafkajs' protocol error types). */
const MOVED_LEADERSHIP = new Set(['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/** Whether `error` says the broker asked no longer leads the partition (its metadata was stale). */
export function movedLeadership(error: unknown): boolean {
  const type = (error as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' && MOVED_LEADERSHIP.has(type);
}

/** How long a replica that did not answer a leader confirmation is counted as not answering, unasked. */
const SILENT_REPLICA_MS = 1000;

export class PartitionHeads {
  private cluster: Promise<Cluster> | undefined;
  /** The cluster once connected, for the leaders' view (read synchronously). */
  private ready: Cluster | undefined;
  /** Per replica (node id), until when it counts as not answering (monotonic milliseconds). */
  private readonly silentUntilMs = new Map<number, number>();
  private readonly leaders: LeadersView;
  private closed = false;
  /** Per partition: concurrent callers share one request, and a caller never gets a head read before it asked. */
  private readonly reads: (() => Promise<number>)[];

  constructor(private readonly options: PartitionHeadsOptions) {
    this.leaders = leadersViewOf(options.topic);
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
   * admin client's own view of the leaders is refreshed every five minutes, and kafkajs' own view
   * waits on a paused broker when it picked it: after a paused leader's partitions had new leaders,
   * both kept these reads waiting on the paused broker.
   */
  async allHeads(): Promise<Map<number, number>> {
    const cluster = await this.connected();
    const partitions = Array.from({ length: this.options.partitions }, (_, partition) => partition);
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.headsFromLeaders(cluster, partitions, await this.leaders.current(cluster));
      } catch (error) {
        // A leader may have moved: the next read asks the new one.
        if (!this.closed) await this.leaders.outdated(cluster).catch(() => undefined);
        // Asked of a broker that no longer leads (a restart, an election): asked again, at once, of
        // the new leader. A tool reads the head once at its start (`reports events` just after a
        // broker came back failed with "not the leader"); an outage's timeout is not waited again.
        if (this.closed || !movedLeadership(error) || attempt >= DEPOSED_READS) throw error;
      }
    }
  }

  /** Connects and asks who leads in the background, so that `leaderOf` knows the leaders soon after the start. */
  warm(): void {
    this.connected()
      .then((cluster) => this.leaders.current(cluster))
      .catch(() => undefined);
  }

  /** The node id of the partition's leader as last seen, or undefined while not known. */
  leaderOf(partition: number): number | undefined {
    const cluster = this.ready;
    if (cluster === undefined) return undefined;
    const leader = this.leaders.known(cluster).get(partition)?.leader;
    return leader === undefined || leader < 0 ? undefined : leader;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.leaders.close();
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
   * one more read asks the new one, where failing would answer 503 for nothing. Whether the other
   * replicas deposed it, or it answered itself that it no longer leads.
   */
  private async read(partition: number): Promise<number> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.readOnce(partition);
      } catch (error) {
        const moved = error instanceof DeposedLeaderError || movedLeadership(error);
        if (!moved || attempt >= DEPOSED_READS) throw error;
      }
    }
  }

  private async readOnce(partition: number): Promise<number> {
    const cluster = await this.connected();
    try {
      const places = await this.leaders.current(cluster);
      const place = places.get(partition);
      // The head and the other replicas' word at once: no round trip more than before.
      const confirmed =
        place === undefined || place.leader < 0
          ? undefined
          : confirmLeader({
              partition,
              leader: place.leader,
              replicas: place.replicas,
              minInsyncReplicas: this.options.minInsyncReplicas ?? 1,
              leaderNamedBy: (replica) => this.leaderNamedBy(cluster, replica, partition),
            });
      const [heads] = await Promise.all([this.headsFromLeaders(cluster, [partition], places), confirmed]);
      return heads.get(partition) ?? -1;
    } catch (error) {
      // The leader may have moved: the next read asks the new one.
      if (!this.closed) await this.leaders.outdated(cluster).catch(() => undefined);
      throw error;
    }
  }

  /** The heads of `partitions`, one request per leader `places` names; throws when one is missing. */
  private async headsFromLeaders(
    cluster: Cluster,
    partitions: readonly number[],
    places: Places,
  ): Promise<Map<number, number>> {
    const byLeader = new Map<number, number[]>();
    for (const partition of partitions) {
      const leader = places.get(partition)?.leader ?? -1;
      if (leader < 0) throw new Error(`partition ${partition} has no leader`);
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), partition]);
    }
    const answers = await Promise.all(
      [...byLeader].map(async ([leader, led]) =>
        listHeads(await cluster.findBroker({ nodeId: String(leader) }), this.options.topic, led),
      ),
    );
    const heads = new Map(answers.flatMap((answer) => [...answer]));
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
