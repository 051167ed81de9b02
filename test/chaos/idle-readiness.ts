// An instance that writes nothing while the leader of one of its topic's partitions is paused. Once
// that partition has a new leader, a write through the instance is acknowledged, so its /readyz
// must say 200 again, although no write of its own tells it so: its probe decides. The probe once
// asked every partition's head through an admin client whose leaders' view was never refreshed
// (kafkajs refreshes an admin's metadata every 5 minutes), so it kept asking the paused broker and
// the instance answered 503 for the whole pause; behind a load balancer an idle instance dropped out
// while one broker of three was paused. The short form of the fault suite caught it once: a script's
// instance fell idle after its last write.
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import type { KafkaCluster } from '../helpers/kafka-cluster.js';
import { tempDir } from '../helpers/server.js';

export interface ReadinessPollOfIdle {
  /** Milliseconds since the paused partition had a new leader. */
  readonly afterElectionMs: number;
  readonly status: number;
  readonly reason?: string;
}

export interface IdleReadinessRun {
  readonly partition: number;
  readonly pausedNode: number;
  readonly newLeader: number;
  /** The polls of the judged stretch, from `graceMs` after the election on. */
  readonly polls: readonly ReadinessPollOfIdle[];
}

export interface IdleReadinessOptions {
  readonly topic: string;
  /** What an instance may take, after the election, to say 200 again (the suite's READY_WITHIN_MS). */
  readonly graceMs: number;
  /** How long /readyz is polled after the grace. */
  readonly judgedMs: number;
}

const POLL_MS = 250;

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function poll(server: ChildServer, afterElectionMs: number): Promise<ReadinessPollOfIdle> {
  try {
    const response = await server.request('/readyz', { token: null, signal: AbortSignal.timeout(2000) });
    const text = await response.text();
    return response.status === 200
      ? { afterElectionMs, status: 200 }
      : { afterElectionMs, status: response.status, reason: text };
  } catch (error) {
    return { afterElectionMs, status: 0, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Starts one instance on `topic`, pauses the leader of a partition, and polls the idle instance's /readyz. */
export async function idleReadinessDuringPause(
  cluster: KafkaCluster,
  { topic, graceMs, judgedMs }: IdleReadinessOptions,
): Promise<IdleReadinessRun> {
  const server = await startChildServer(
    {
      KAFKA_BROKERS: cluster.brokers,
      REPORTS_TOPIC: topic,
      REPORTS_TOPIC_PARTITIONS: '3',
      REPORTS_TOPIC_REPLICATION_FACTOR: '3',
      REPORTS_WRITE_TIMEOUT_MS: '5000',
      REPORTS_DATA_DIR: await tempDir('chaos-idle-'),
      KAFKA_CLIENT_ID: 'chaos-idle',
    },
    { startTimeoutMs: 90_000 },
  );
  try {
    await server.waitReady(60_000);
    // Not the first seed broker: a client that asks it first would not move on from a paused one.
    const first = cluster.nodes[0]?.id;
    const [partition, pausedNode] = await waitFor('a partition led by another node than the first', 30_000, async () =>
      [...(await cluster.leaders(topic))].find(([, leader]) => leader >= 0 && leader !== first),
    );
    cluster.pause(pausedNode);
    try {
      const newLeader = await waitFor(`a new leader of partition ${partition}`, 30_000, async () => {
        const leader = (await cluster.leaders(topic)).get(partition) ?? -1;
        return leader >= 0 && leader !== pausedNode ? leader : undefined;
      });
      const electedMs = Date.now();
      await new Promise((resolve) => setTimeout(resolve, graceMs));
      const polls: ReadinessPollOfIdle[] = [];
      while (Date.now() - electedMs < graceMs + judgedMs) {
        polls.push(await poll(server, Date.now() - electedMs));
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      return { partition, pausedNode, newLeader, polls };
    } finally {
      cluster.resume(pausedNode);
    }
  } finally {
    server.kill('SIGKILL');
    await server.waitExit().catch(() => undefined);
  }
}
