// The faults, each injected on a schedule while the workload runs: what it does to which node, and
// the window it reports (from injection to repair, and the partitions whose leader it hit).
import type { JumpingClock } from '../helpers/faketime.js';
import { nodeUid, type ClusterNode, type KafkaCluster } from '../helpers/kafka-cluster.js';
import type { NetFaults } from '../helpers/net-faults.js';
import type { FaultWindow } from './history.js';
import type { Instances } from './instances.js';
import { fillBrokerDisk, freeBrokerDisk, moveOntoSmallDisk } from './broker-disk.js';
import { lateDelivery } from './late-delivery.js';
import type { Recorder } from './recorder.js';

/** How long each fault lasts: the short form (make test) and the long form (make chaos). */
export interface Timing {
  readonly warmUpMs: number;
  /** Writing on after the cluster is whole again. */
  readonly settleMs: number;
  readonly killedLeaderDownMs: number;
  readonly pauseMs: number;
  readonly twoDownMs: number;
  readonly instanceDownMs: number;
  /** How long each step of an instance's wall clock (+1 h, then -1 h) lasts. */
  readonly clockJumpMs: number;
  /** How long the network to the brokers is slow and loses packets. */
  readonly lossMs: number;
  /** How long an instance is cut off from one broker. */
  readonly cutMs: number;
  /** How long a leader is cut off from the other nodes. */
  readonly isolateMs: number;
  /** How long an instance's only seed broker stays paused at its start (longer than one attempt to reach it, about 10 s). */
  readonly seedPauseMs: number;
  /** How long a broker whose disk filled stays down before its disk is freed and it is started again. */
  readonly fullDiskDownMs: number;
  /** How long the late-delivery script waits for the other instance's retries during the pause. */
  readonly lateDeliveryDeadlineMs: number;
  readonly thinkMs: number;
  readonly uniqueWorkersPerInstance: number;
  readonly cycleIds: number;
  /** Clients that send each request of a report's seven-step script through the next instance in turn. */
  readonly hopClients: number;
  readonly raceEveryMs: number;
}

export const SHORT: Timing = {
  warmUpMs: 1500,
  settleMs: 2000,
  // Past SETTLE_AFTER_FAULT_MS (8 s) on its own: a window of 5 s plus a restart that took 2.1 s left
  // no write to judge against the kill-leader target (0 of 0, a failure); 9 s left one second of
  // writes to judge, a handful on a loaded machine. 12 s leaves four.
  killedLeaderDownMs: 12_000,
  // Long enough to judge writes sent from 8 s after the fault on and answered before it ends
  // (issue 17 item 2's target) when a stuck write takes the whole 5 s write timeout.
  pauseMs: 16_000,
  twoDownMs: 5000,
  instanceDownMs: 1000,
  clockJumpMs: 5000,
  lossMs: 8000,
  // 6 s of writes to judge from 8 s on: with 9 s, a loaded machine sent only 4 such writes in the one
  // second left (3 acknowledged: 75 %, a failure on a sample too small to say anything).
  cutMs: 14_000,
  isolateMs: 12_000,
  seedPauseMs: 15_000,
  fullDiskDownMs: 9000,
  lateDeliveryDeadlineMs: 30_000,
  thinkMs: 150,
  uniqueWorkersPerInstance: 2,
  cycleIds: 4,
  hopClients: 2,
  raceEveryMs: 1000,
};

export const LONG: Timing = {
  warmUpMs: 5000,
  settleMs: 10_000,
  killedLeaderDownMs: 20_000,
  pauseMs: 35_000,
  twoDownMs: 20_000,
  instanceDownMs: 5000,
  clockJumpMs: 20_000,
  lossMs: 30_000,
  cutMs: 20_000,
  isolateMs: 30_000,
  seedPauseMs: 30_000,
  fullDiskDownMs: 20_000,
  lateDeliveryDeadlineMs: 60_000,
  thinkMs: 100,
  uniqueWorkersPerInstance: 3,
  cycleIds: 8,
  hopClients: 4,
  raceEveryMs: 500,
};

export interface FaultContext {
  readonly cluster: KafkaCluster;
  readonly instances: Instances;
  readonly recorder: Recorder;
  readonly topic: string;
  readonly partitions: number;
  readonly timing: Timing;
  /** The wall clock of the instances in Scenario.clockOn. */
  readonly clock: JumpingClock | undefined;
  /** nftables rules on loopback, when Scenario.network. */
  readonly net: NetFaults | undefined;
  /** Notes for the report (what a script saw). */
  note(line: string): void;
}

export interface Scenario {
  readonly name: string;
  /** The instances the background workload writes through (default: all); polls cover all. */
  readonly workloadOn?: readonly string[];
  /** Instances the scenario starts itself (not running when it begins). */
  readonly deferred?: readonly string[];
  /** Instances that run with a wall clock the scenario moves (FaultContext.clock). */
  readonly clockOn?: readonly string[];
  /** More environment for an instance, once the cluster is known (KAFKA_BROKERS of one node only). */
  readonly envOf?: (name: string, cluster: KafkaCluster) => Readonly<Record<string, string>>;
  /**
   * Whether the scenario runs on a cluster of its own whose nodes are behind delay proxies: the
   * slow network, and two-down (a proxy answers a connection while its node is down, which is how
   * two-down found kafkajs answering sends it never made, src/log/kafka/renewing-producer.ts). The
   * others run on a cluster without proxies, as Kafka users run it (`--proxy-all`: behind them too).
   */
  readonly proxied?: boolean;
  /** Whether the scenario drops packets (FaultContext.net). */
  readonly network?: boolean;
  /** Instances that run as a user of their own (by uid), so that a rule can cut their packets alone. */
  readonly users?: Readonly<Record<string, number>>;
  inject(context: FaultContext): Promise<FaultWindow[]>;
}

/** The slow-lossy-network scenario: per cent of the packets sent to a broker lost, and each chunk's delay through the proxies. */
export const LOSS_PERCENT = 2;
export const DELAY_MS = 100;
export const JITTER_MS = 50;
/** The seed-paused scenario: instance B's only seed broker, and how long it stays paused at B's start. */
const SEED_NODE = 1;
/** What seed-paused notes when instance B's start waited for its seed (chaos.test.ts checks it). */
export const SEED_WAITED = 'instance B waited for its seed broker, then started';
/** The user instance B runs as in instance-cut-from-broker (no account needed: a uid is enough). */
const CUT_INSTANCE_UID = 64_002;

const portOf = (address: string) => Number(address.slice(address.lastIndexOf(':') + 1));
/** A node's ports the other nodes use: its PLAINTEXT listener (replication) and its controller's. */
const nodePorts = (node: ClusterNode) => [portOf(node.address), node.controllerPort];

function netOf({ net }: FaultContext): NetFaults {
  if (net === undefined) throw new Error('this scenario drops packets: it needs Scenario.network');
  return net;
}

/** The answer times of the writes acknowledged during `window`: how slow the network made them. */
function latencyNote(recorder: Recorder, { startMs, endMs }: FaultWindow): string {
  const times = recorder.requests
    .filter((r) => (r.status === 200 || r.status === 204) && r.sentMs >= startMs && r.sentMs <= endMs)
    .map((r) => r.answeredMs - r.sentMs)
    .sort((a, b) => a - b);
  const at = (share: number) => times[Math.min(times.length - 1, Math.floor(share * times.length))] ?? 0;
  return `acknowledged writes sent during the slow network: ${times.length}, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, slowest ${times.at(-1) ?? 0} ms`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The leader of partition 0 and every partition it leads. */
async function leaderOfFirst({ cluster, topic }: FaultContext): Promise<{ node: number; partitions: number[] }> {
  const leaders = await cluster.leaders(topic);
  const node = leaders.get(0);
  if (node === undefined || node < 0) throw new Error(`partition 0 of ${topic} has no leader`);
  return { node, partitions: [...leaders].filter(([, leader]) => leader === node).map(([partition]) => partition) };
}

async function window(
  fault: string,
  targets: readonly string[],
  stuckPartitions: readonly number[],
  act: () => Promise<void>,
): Promise<FaultWindow> {
  const startMs = Date.now();
  await act();
  return { fault, targets, startMs, endMs: Date.now(), stuckPartitions };
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'kill-leader',
    async inject(context) {
      const { node, partitions } = await leaderOfFirst(context);
      return [
        await window('SIGKILL leader, restart', [`node ${node}`], partitions, async () => {
          await context.cluster.kill(node);
          await sleep(context.timing.killedLeaderDownMs);
          await context.cluster.restart(node);
        }),
      ];
    },
  },
  {
    name: 'pause-leader',
    async inject(context) {
      const { node, partitions } = await leaderOfFirst(context);
      return [
        await window(`SIGSTOP leader ${context.timing.pauseMs / 1000} s`, [`node ${node}`], partitions, async () => {
          context.cluster.pause(node);
          await sleep(context.timing.pauseMs);
          context.cluster.resume(node);
        }),
      ];
    },
  },
  {
    name: 'two-down',
    // Behind the proxies, which accept a connection while their node is down and then close it:
    // that is how this scenario found kafkajs answering sends it never made (renewing-producer.ts).
    proxied: true,
    async inject(context) {
      const { node } = await leaderOfFirst(context);
      const other = context.cluster.nodes.map(({ id }) => id).find((id) => id !== node) ?? node;
      const all = Array.from({ length: context.partitions }, (_, p) => p);
      return [
        await window('SIGKILL 2 of 3, restart', [`node ${node}`, `node ${other}`], all, async () => {
          await Promise.all([context.cluster.kill(node), context.cluster.kill(other)]);
          await sleep(context.timing.twoDownMs);
          await Promise.all([context.cluster.restart(node), context.cluster.restart(other)]);
        }),
      ];
    },
  },
  {
    name: 'rolling-restart',
    async inject(context) {
      const windows: FaultWindow[] = [];
      for (const { id } of context.cluster.nodes) {
        const leaders = await context.cluster.leaders(context.topic);
        const led = [...leaders].filter(([, leader]) => leader === id).map(([partition]) => partition);
        windows.push(
          await window('clean restart', [`node ${id}`], led, async () => {
            await context.cluster.stop(id);
            await context.cluster.restart(id);
            await context.cluster.waitHealthy([context.topic]);
          }),
        );
      }
      return windows;
    },
  },
  {
    name: 'kill-instance',
    async inject(context) {
      return [
        await window('SIGKILL instance, restart', ['instance B'], [], async () => {
          await context.instances.kill('B');
          await sleep(context.timing.instanceDownMs);
          await context.instances.restart('B');
        }),
      ];
    },
  },
  {
    // The wall clock of one instance stepped forward an hour, then back two (to an hour behind),
    // then put right, under the workload: NTP or an operator stepping the clock of a running host.
    name: 'clock-jumps',
    clockOn: ['B'],
    async inject(context) {
      const { clock, timing } = context;
      if (clock === undefined) throw new Error('clock-jumps runs instance B with a jumping clock');
      return [
        await window('wall clock of instance B +1 h, then -1 h', ['instance B'], [], async () => {
          await clock.set('+1h');
          await sleep(timing.clockJumpMs);
          await clock.set('-1h');
          await sleep(timing.clockJumpMs);
          await clock.set('+0');
          // The instance reads the offset again within a second.
          await sleep(1500);
        }),
      ];
    },
  },
  {
    // A slow and lossy network: everything the brokers' proxies forward (clients and replication)
    // delayed by 100 ± 50 ms each way, and 2 % of the packets to every broker port (the proxies',
    // the brokers' own, the KRaft controllers') lost at random, which TCP resends after a time-out.
    name: 'slow-lossy-network',
    network: true,
    proxied: true,
    async inject(context) {
      const net = netOf(context);
      const { cluster, timing } = context;
      if (cluster.nodes.some((node) => node.proxy === undefined))
        throw new Error('slow-lossy-network needs a cluster whose nodes are proxied');
      const ports = cluster.nodes.flatMap((node) => [portOf(node.address), node.brokerPort, node.controllerPort]);
      return [
        await window(
          `every broker port ${DELAY_MS} ± ${JITTER_MS} ms slower, ${LOSS_PERCENT} % of packets lost, ${timing.lossMs / 1000} s`,
          ['every node'],
          [],
          async () => {
            cluster.setDelay(DELAY_MS, JITTER_MS);
            const rule = await net.lose(ports, LOSS_PERCENT);
            try {
              await sleep(timing.lossMs);
            } finally {
              cluster.setDelay(0, 0);
              await net.remove(rule);
            }
          },
        ).then((slow) => {
          context.note(latencyNote(context.recorder, slow));
          return slow;
        }),
      ];
    },
  },
  {
    // The leader of partition 0 cut off from the other nodes both ways (each node runs as a user of
    // its own: its packets to their ports and theirs to its ports dropped, by sender), while the
    // instances still reach it: a leader that takes requests it can no longer replicate.
    name: 'leader-isolated',
    network: true,
    async inject(context) {
      const net = netOf(context);
      const { cluster, timing } = context;
      const { node, partitions } = await leaderOfFirst(context);
      const others = cluster.nodes.filter((other) => other.id !== node);
      return [
        await window(
          `leader node ${node} cut off from the other nodes, ${timing.isolateMs / 1000} s`,
          [`node ${node}`],
          partitions,
          async () => {
            const rules = [
              await net.cut(others.flatMap(nodePorts), nodeUid(node)),
              ...(await Promise.all(others.map((other) => net.cut(nodePorts(cluster.node(node)), nodeUid(other.id))))),
            ];
            await sleep(timing.isolateMs);
            for (const rule of rules) await net.remove(rule);
          },
        ),
      ];
    },
  },
  {
    // One instance cut off from the leader of partition 0 (its packets to that broker's port
    // dropped, by its user): the other instances and the other partitions go on.
    name: 'instance-cut-from-broker',
    network: true,
    users: { B: CUT_INSTANCE_UID },
    async inject(context) {
      const net = netOf(context);
      const { node, partitions } = await leaderOfFirst(context);
      const port = portOf(context.cluster.node(node).address);
      return [
        await window(
          `instance B cut off from node ${node}, ${context.timing.cutMs / 1000} s`,
          ['instance B', `node ${node}`],
          partitions,
          async () => {
            const rule = await net.cut([port], CUT_INSTANCE_UID);
            await sleep(context.timing.cutMs);
            await net.remove(rule);
          },
        ),
      ];
    },
  },
  {
    // The disk of partition 0's leader fills (its logs on a small tmpfs of their own, moved there
    // by a clean restart first): Kafka takes its only log directory offline and halts.
    name: 'broker-disk-full',
    async inject(context) {
      const { cluster, topic, timing } = context;
      const first = await leaderOfFirst(context);
      const moved = await window('clean restart onto a small disk', [`node ${first.node}`], first.partitions, () =>
        moveOntoSmallDisk(cluster, first.node, [topic]),
      );
      // Leadership may have moved with the restart: the fault goes to whoever leads partition 0 now, if it is that node.
      const { node, partitions } = await leaderOfFirst(context);
      const target = node === first.node ? node : first.node;
      const led = node === first.node ? partitions : [];
      const filled = await window(
        `disk of node ${target} full, ${timing.fullDiskDownMs / 1000} s`,
        [`node ${target}`],
        led,
        async () => {
          const halted = await fillBrokerDisk(cluster, target, 30_000);
          context.note(
            halted
              ? `node ${target} halted when its disk filled`
              : `node ${target} was still running 30 s after its disk filled`,
          );
          await sleep(timing.fullDiskDownMs);
          await freeBrokerDisk(cluster, target);
          if (halted) await cluster.wentDown(target);
          else await cluster.stop(target);
          await cluster.restart(target);
        },
      );
      return [moved, filled];
    },
  },
  {
    // Instance B started late with node 1 as its only seed, while node 1 is paused: the start waits
    // for it (one line), and goes on once it is resumed.
    name: 'seed-paused',
    deferred: ['B'],
    envOf: (name, cluster): Record<string, string> =>
      name === 'B' ? { KAFKA_BROKERS: cluster.node(SEED_NODE).address } : {},
    async inject(context) {
      const { cluster, instances, topic } = context;
      const led = [...(await cluster.leaders(topic))]
        .filter(([, leader]) => leader === SEED_NODE)
        .map(([partition]) => partition);
      return [
        await window(
          `node ${SEED_NODE}, instance B's only seed, paused at its start`,
          [`node ${SEED_NODE}`, 'instance B'],
          led,
          async () => {
            cluster.pause(SEED_NODE);
            const starting = instances.startLate('B');
            try {
              await sleep(context.timing.seedPauseMs);
            } finally {
              cluster.resume(SEED_NODE);
            }
            await starting;
            const waited = instances
              .lines('B')
              .some((line) => String(line['msg']).startsWith('no broker of KAFKA_BROKERS answers yet'));
            context.note(
              waited ? SEED_WAITED : 'instance B started without waiting (its first attempt outlasted the pause)',
            );
          },
        ),
      ];
    },
  },
  // A and B carry only the script: a client, and its retry through an instance started during the
  // pause (the "freshly started instance"; an old one may be stuck: that is item 2).
  { name: 'late-delivery', workloadOn: ['C'], deferred: ['B'], inject: lateDelivery },
];
