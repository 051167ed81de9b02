// Issue 17 item 1 as a script: create X; pause the leader of X's partition; DELETE X through
// instance A (answered 503: the write is stuck in A's producer); once the partition has a new
// leader, through instance B, as the 503 invites, DELETE X until it is gone, then create X with a
// new name; resume the leader. Whatever A's stuck DELETE does when it lands, X must end with the
// new name everywhere.
// B is started at that moment (the "freshly started instance"): its clients know only
// the live brokers, so its writes reach the new leader; an instance that ran before may have a
// connection to the paused broker on which its producer hangs (item 2, the pause scenario's
// business). And the paused broker must not be the first of KAFKA_BROKERS: kafkajs always asks
// that one first and does not move on from a broker that accepts connections but never answers,
// so a fresh instance could not start. X is therefore an id whose partition another node leads.
import { partitionOfKey } from '../../src/log/kafka/key-partition.js';
import type { FaultWindow, RequestRecord } from './history.js';
import { unknownOutcome } from './history.js';
import type { WriteRequest } from './recorder.js';
import type { FaultContext } from './scenarios.js';
import { ID_BASE } from './workload.js';

/** The name the script's report must end with. */
export const LATE_FINAL_NAME = 'late delivery v2';

/** The first script id whose partition is led by a node other than the first of KAFKA_BROKERS. */
async function pickId({
  cluster,
  topic,
  partitions,
}: FaultContext): Promise<{ id: string; partition: number; node: number }> {
  const leaders = await cluster.leaders(topic);
  const first = cluster.nodes[0]?.id;
  // A thousand ids cover every partition many times over: past them no partition has such a leader.
  for (let id = ID_BASE.script + 1; id <= ID_BASE.script + 1000; id += 1) {
    const partition = partitionOfKey(String(id), partitions);
    const node = leaders.get(partition) ?? -1;
    if (node >= 0 && node !== first) return { id: String(id), partition, node };
  }
  throw new Error(`no partition of ${topic} is led by a node other than ${first}: ${JSON.stringify([...leaders])}`);
}

/** Sends `request` until its answer is one of `wanted` (or the deadline passes); the last answer. */
async function until(
  context: FaultContext,
  request: Omit<WriteRequest, 'purpose'>,
  wanted: readonly number[],
  deadline: number,
): Promise<RequestRecord> {
  for (;;) {
    const answer = await context.recorder.send({ ...request, purpose: 'script' });
    if (wanted.includes(answer.status) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Waits until the live nodes name a leader of `partition` other than `paused`. */
async function newLeader(
  context: FaultContext,
  partition: number,
  paused: number,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leader = await context.cluster.leaders(context.topic).then(
      (leaders) => leaders.get(partition) ?? -1,
      () => -1,
    );
    if ((leader >= 0 && leader !== paused) || Date.now() > deadline) return leader;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function lateDelivery(context: FaultContext): Promise<FaultWindow[]> {
  const { cluster, timing } = context;
  const { id, partition, node } = await pickId(context);
  const created = await until(
    context,
    { op: 'create', id, name: 'late delivery v1', instance: 'A' },
    [200],
    Date.now() + 30_000,
  );
  if (created.status !== 200)
    throw new Error(`the late-delivery script could not create ${id}: ${created.status} ${created.message ?? ''}`);
  const startMs = Date.now();
  cluster.pause(node);
  try {
    const stuck = await context.recorder.send({ op: 'delete', id: id, instance: 'A', purpose: 'script' });
    const leader = await newLeader(context, partition, node);
    await context.instances.startLate('B');
    const deadline = Date.now() + timing.lateDeliveryDeadlineMs;
    const deleted = await until(context, { op: 'delete', id: id, instance: 'B' }, [204, 404], deadline);
    const recreated = await until(
      context,
      { op: 'create', id: id, name: LATE_FINAL_NAME, instance: 'B' },
      [200, 409],
      deadline,
    );
    const tries = (instance: string, op: string) =>
      context.recorder.requests.filter(
        (r) => r.purpose === 'script' && r.instance === instance && r.op === op && r.sentMs >= startMs,
      ).length;
    context.note(
      `late delivery of ${id} on partition ${partition} (leader node ${node} paused, then node ${leader}): DELETE via A -> ${stuck.status}; ` +
        `DELETE via B -> ${deleted.status} after ${tries('B', 'delete')} tries; create via B -> ${recreated.status} after ${tries('B', 'create')} tries, ${((Date.now() - startMs) / 1000).toFixed(1)} s into the pause`,
    );
    if (!unknownOutcome(stuck))
      context.note(`late delivery not reproduced: the DELETE via A was answered ${stuck.status}`);
  } finally {
    cluster.resume(node);
  }
  return [
    {
      fault: 'SIGSTOP leader, retry via B',
      targets: [`node ${node}`],
      startMs,
      endMs: Date.now(),
      stuckPartitions: [partition],
    },
  ];
}
