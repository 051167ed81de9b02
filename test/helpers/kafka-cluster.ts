/**
 * A three-node KRaft cluster on 127.0.0.1 for fault tests: every node is broker and controller
 * (static quorum, controller.quorum.voters), started by test/broker/kafka-broker.sh like the single
 * test broker, replicated as users run Kafka: replication factor 3, min.insync.replicas=2, no
 * unclean leader election. Node i (1-based) listens on basePort + 10(i-1) (PLAINTEXT), +1
 * (controller) and +2 (SASL). Choose ports below the ephemeral range (32768 on Linux): a killed node's
 * port may meanwhile be taken by some client's outgoing connection, and the node cannot restart.
 *
 *   const cluster = await startCluster({ name: 'chaos', basePort: 28100 });
 *   cluster.brokers;                          // '127.0.0.1:28100,127.0.0.1:28110,127.0.0.1:28120'
 *   const leader = (await cluster.leaders(topic)).get(0);
 *   cluster.pause(leader); ... cluster.resume(leader);
 *   await cluster.kill(leader); await cluster.restart(leader);
 *   await cluster.close();
 *
 * Nodes are SIGKILLed by an exit hook (and by a watcher if this process is killed outright).
 */
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import kafkajs, { type Admin } from 'kafkajs';
import { brokerRunDir, freePorts, startBroker, type KafkaBroker } from './kafka-broker.js';
import { warmProducerIds } from './kafka-producer-ids.js';

export interface KafkaClusterOptions {
  /** Node i keeps its state in .cache/kafka/run/<name>-<i>/. */
  readonly name: string;
  /**
   * Node i's ports are basePort + 10(i-1) + 0, 1, 2. Without it, the ports are free ones and the
   * name gets this process's pid, so that test runs side by side never share a cluster.
   */
  readonly basePort?: number;
  readonly nodes?: number;
  readonly heap?: string;
  /** Broker settings on top of CLUSTER_PROPERTIES. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Each node's JVM runs as a user of its own (`uidOf`), so that nftables can cut one node's packets alone. */
  readonly usersOfTheirOwn?: boolean;
  /**
   * A delay proxy in front of each node's PLAINTEXT port, the port the node advertises (node i's is
   * basePort + 10(i-1) + 3): clients and replication go through it, and `setDelay` slows them.
   */
  readonly proxied?: boolean;
}

/** The user node `id` runs as with `usersOfTheirOwn` (no account needed: a uid is enough). */
export function nodeUid(id: number): number {
  return 64_100 + id;
}

/** What every node runs with (kafka-broker.sh's single-node settings are overridden here). */
export const CLUSTER_PROPERTIES: Readonly<Record<string, string>> = {
  'default.replication.factor': '3',
  'min.insync.replicas': '2',
  'offsets.topic.replication.factor': '3',
  'transaction.state.log.replication.factor': '3',
  'transaction.state.log.min.isr': '2',
  'share.coordinator.state.topic.replication.factor': '3',
  'share.coordinator.state.topic.min.isr': '2',
  'unclean.leader.election.enable': 'false',
  // A silent (crashed or paused) broker is fenced, and leaves every ISR, 3 s after its last heartbeat.
  'broker.session.timeout.ms': '3000',
  'broker.heartbeat.interval.ms': '500',
  // The leader stamps every record when it appends it, so a checker can tell when a write landed
  // (CreateTime is when the producer first built the batch, however long it then retried).
  'log.message.timestamp.type': 'LogAppendTime',
};

export interface ClusterNode {
  readonly id: number;
  /** 127.0.0.1:<advertised PLAINTEXT port> (the proxy's, when proxied): clients and the other nodes' replication. */
  readonly address: string;
  /** The PLAINTEXT port the broker itself listens on (the proxy forwards to it). */
  readonly brokerPort: number;
  readonly proxy?: DelayProxy;
  /** The KRaft controller listener's port. */
  readonly controllerPort: number;
  readonly broker: KafkaBroker;
}

export type NodeState = 'up' | 'paused' | 'down';

/** Kafka's cluster id: 16 random bytes, unpadded base64url, not starting with '-'. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function nodeEnv(options: KafkaClusterOptions, voters: string, id: string, nodeId: number): Record<string, string> {
  const properties = { ...CLUSTER_PROPERTIES, ...options.properties };
  return {
    KAFKA_NODE_ID: String(nodeId),
    KAFKA_QUORUM_VOTERS: voters,
    KAFKA_CLUSTER_ID: id,
    KAFKA_HEAP: options.heap ?? '-Xms128m -Xmx384m',
    KAFKA_EXTRA_PROPERTIES: Object.entries(properties)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n'),
    KAFKA_STOP_TIMEOUT: '15',
    ...(options.usersOfTheirOwn === true ? { KAFKA_RUN_AS_UID: String(nodeUid(nodeId)) } : {}),
  };
}

export class KafkaCluster {
  private readonly states = new Map<number, NodeState>();
  /** Undone once the nodes are stopped (a small disk mounted under a node's data: unmounted). */
  private readonly undo: (() => Promise<void>)[] = [];

  constructor(
    readonly name: string,
    readonly nodes: readonly ClusterNode[],
  ) {
    for (const node of nodes) this.states.set(node.id, 'up');
  }

  /** Every node's address, comma-separated (KAFKA_BROKERS). */
  get brokers(): string {
    return this.nodes.map((node) => node.address).join(',');
  }

  node(id: number): ClusterNode {
    const node = this.nodes.find((candidate) => candidate.id === id);
    if (node === undefined) throw new Error(`cluster ${this.name} has no node ${id}`);
    return node;
  }

  state(id: number): NodeState {
    return this.states.get(id) ?? 'down';
  }

  /** The nodes that answer (neither paused nor down): where the cluster's own admin requests go. */
  liveNodes(): ClusterNode[] {
    return this.nodes.filter((node) => this.state(node.id) === 'up');
  }

  async kill(id: number): Promise<void> {
    await this.node(id).broker.kill();
    this.states.set(id, 'down');
  }

  /** Clean shutdown (controlled: leadership moves first). */
  async stop(id: number): Promise<void> {
    await this.node(id).broker.stop();
    this.states.set(id, 'down');
  }

  pause(id: number): void {
    this.node(id).broker.pause();
    this.states.set(id, 'paused');
  }

  resume(id: number): void {
    this.node(id).broker.resume();
    this.states.set(id, 'up');
  }

  /** Starts a stopped or killed node on its data and gives it producer ids again (they are per process). */
  async restart(id: number): Promise<void> {
    const node = this.node(id);
    await node.broker.start();
    this.states.set(id, 'up');
    await warmProducerIds(node.address);
  }

  /** Runs `use` with an admin client on the live nodes (one that asks a paused node would hang). */
  async withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
    const kafka = new kafkajs.Kafka({
      clientId: 'kafka-cluster',
      brokers: this.liveNodes().map((node) => node.address),
      logLevel: kafkajs.logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 3000,
      retry: { retries: 5, initialRetryTime: 100 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      return await use(admin);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  /** Partition -> leader node id (-1 while a partition has none), as the live nodes see it. */
  async leaders(topic: string): Promise<Map<number, number>> {
    const metadata = await this.withAdmin((admin) => admin.fetchTopicMetadata({ topics: [topic] }));
    return new Map(
      (metadata.topics[0]?.partitions ?? []).map((partition) => [partition.partitionId, partition.leader]),
    );
  }

  /**
   * The active controller (the KRaft quorum's leader), read from the quorum-state files the nodes
   * write whenever an election ends: the newest epoch's leader. Undefined before the first election.
   */
  activeController(): number | undefined {
    let best: { epoch: number; leader: number } | undefined;
    for (const node of this.nodes) {
      const file = path.join(brokerRunDir(`${this.name}-${node.id}`), 'data', '__cluster_metadata-0', 'quorum-state');
      try {
        const state = JSON.parse(readFileSync(file, 'utf8')) as { leaderId?: number; leaderEpoch?: number };
        const { leaderId = -1, leaderEpoch = -1 } = state;
        if (leaderId >= 0 && (best === undefined || leaderEpoch > best.epoch))
          best = { epoch: leaderEpoch, leader: leaderId };
      } catch {
        // not written yet, or being replaced
      }
    }
    return best?.leader;
  }

  /**
   * Waits until every node is registered and unfenced and, for each topic given, every partition
   * has a leader and all replicas in sync: the cluster is whole again and the next fault starts clean.
   */
  async waitHealthy(topics: readonly string[] = [], timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'not asked yet';
    while (Date.now() < deadline) {
      try {
        last = await this.withAdmin((admin) => this.unhealthy(admin, topics));
        if (last === '') return;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`cluster ${this.name} not healthy within ${timeoutMs} ms: ${last}`);
  }

  private async unhealthy(admin: Admin, topics: readonly string[]): Promise<string> {
    const { brokers } = await admin.describeCluster();
    if (brokers.length < this.nodes.length) return `${brokers.length} of ${this.nodes.length} brokers registered`;
    if (topics.length === 0) return '';
    const metadata = await admin.fetchTopicMetadata({ topics: [...topics] });
    for (const topic of metadata.topics) {
      for (const partition of topic.partitions) {
        if (partition.leader < 0 || partition.isr.length < partition.replicas.length)
          return `${topic.name}/${partition.partitionId}: leader ${partition.leader}, isr ${partition.isr.join(',')}`;
      }
    }
    return '';
  }

  /** Delays everything the nodes' proxies forward by mean ± jitter ms from now on (0, 0: none). */
  setDelay(meanMs: number, jitterMs: number): void {
    for (const node of this.nodes) node.proxy?.setDelay(meanMs, jitterMs);
  }

  /** What close() undoes once the nodes are stopped. */
  onClose(undo: () => Promise<void>): void {
    this.undo.push(undo);
  }

  /** A node that went down by itself (a broker halts when its only log directory fails): down, its pid file cleared. */
  async wentDown(id: number): Promise<void> {
    await this.node(id).broker.kill();
    this.states.set(id, 'down');
  }

  /** The directory a node keeps its logs in (log.dirs). */
  dataDir(id: number): string {
    return path.join(brokerRunDir(`${this.name}-${this.node(id).id}`), 'data');
  }

  /** Stops every node that is still running (SIGKILL: the data is thrown away with the cluster). */
  async close(): Promise<void> {
    // SIGKILL stops a paused JVM too.
    await Promise.all(
      this.nodes.filter((node) => node.broker.isRunning()).map((node) => node.broker.kill().catch(() => undefined)),
    );
    for (const node of this.nodes) this.states.set(node.id, 'down');
    for (const undo of this.undo.splice(0)) await undo().catch(() => undefined);
    await Promise.all(this.nodes.flatMap((node) => (node.proxy === undefined ? [] : [node.proxy.close()])));
  }

  /** close(), then deletes every node's run directory (its data and logs): for a cluster of one suite's own. */
  async remove(): Promise<void> {
    await this.close();
    for (const node of this.nodes) rmSync(brokerRunDir(`${this.name}-${node.id}`), { recursive: true, force: true });
  }
}

/**
 * Formats and starts every node at once (a node is ready only once a quorum of controllers is up),
 * waits until all are registered, and warms every node's producer ids.
 */
export async function startCluster(options: KafkaClusterOptions): Promise<KafkaCluster> {
  const count = options.nodes ?? 3;
  const ids = Array.from({ length: count }, (_, i) => i + 1);
  const { basePort } = options;
  const free = basePort === undefined ? await freePorts(4 * count) : [];
  const port = (nodeId: number, offset: number) =>
    basePort === undefined ? (free[4 * (nodeId - 1) + offset] as number) : basePort + 10 * (nodeId - 1) + offset;
  // The proxies first: a node's readiness check follows its advertised address.
  const proxies = new Map<number, DelayProxy>();
  if (options.proxied === true)
    for (const nodeId of ids) proxies.set(nodeId, await startDelayProxy(port(nodeId, 3), port(nodeId, 0)));
  const name = basePort === undefined ? `${options.name}-${process.pid}` : options.name;
  const voters = ids.map((nodeId) => `${nodeId}@127.0.0.1:${port(nodeId, 1)}`).join(',');
  const id = clusterId();
  const started = await Promise.allSettled(
    ids.map(async (nodeId): Promise<ClusterNode> => {
      const broker = await startBroker({
        name: `${name}-${nodeId}`,
        port: port(nodeId, 0),
        controllerPort: port(nodeId, 1),
        saslPort: port(nodeId, 2),
        fresh: true,
        env: {
          ...nodeEnv(options, voters, id, nodeId),
          ...(proxies.has(nodeId) ? { KAFKA_ADVERTISED_PORT: String(port(nodeId, 3)) } : {}),
        },
        onExit: 'kill',
        watch: true,
      });
      const proxy = proxies.get(nodeId);
      return {
        id: nodeId,
        address: proxy === undefined ? broker.brokers : `127.0.0.1:${proxy.port}`,
        brokerPort: port(nodeId, 0),
        controllerPort: port(nodeId, 1),
        broker,
        ...(proxy === undefined ? {} : { proxy }),
      };
    }),
  );
  const nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const cluster = new KafkaCluster(name, nodes);
  const failed = started.find((result) => result.status === 'rejected');
  try {
    if (failed !== undefined) throw failed.reason;
    await cluster.waitHealthy();
    await Promise.all(nodes.map((node) => warmProducerIds(node.address)));
    return cluster;
  } catch (error) {
    await cluster.close();
    // A node that did not start has its proxy still listening.
    await Promise.all([...proxies.values()].map((proxy) => proxy.close()));
    throw error;
  }
}
