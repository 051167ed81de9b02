// Issue 17 item 1 as a script: create X; pause the leader of X's partition; DELETE X through
// instance A (answered 503: the write is stuck in A's producer); through instance B, as the 503
// invites, DELETE X until it is gone, then create X with a new name; resume the leader. Whatever
// A's stuck DELETE does when it lands, X must end with the new name everywhere.
import { partitionOfKey } from '../../src/log/kafka-partition.js';
import type { FaultWindow, RequestRecord } from './history.js';
import { unknownOutcome } from './history.js';
import type { WriteRequest } from './recorder.js';
import type { FaultContext } from './scenarios.js';
import { ID_BASE } from './workload.js';

/** The report the script plays with, and the name it must end with. */
export const LATE_ID = String(ID_BASE.script + 1);
export const LATE_FINAL_NAME = 'late delivery v2';

/** Sends `request` until its answer is one of `wanted` (or the deadline passes); the last answer. */
async function until(context: FaultContext, request: Omit<WriteRequest, 'purpose'>, wanted: readonly number[], deadline: number): Promise<RequestRecord> {
  for (;;) {
    const answer = await context.recorder.send({ ...request, purpose: 'script' });
    if (wanted.includes(answer.status) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function lateDelivery(context: FaultContext): Promise<FaultWindow[]> {
  const { cluster, topic, timing } = context;
  const created = await until(context, { op: 'create', id: LATE_ID, name: 'late delivery v1', instance: 'A' }, [200], Date.now() + 30_000);
  if (created.status !== 200) throw new Error(`the late-delivery script could not create ${LATE_ID}: ${created.status} ${created.message ?? ''}`);
  const partition = partitionOfKey(LATE_ID, context.partitions);
  const leaders = await cluster.leaders(topic);
  const node = leaders.get(partition) ?? -1;
  if (node < 0) throw new Error(`partition ${partition} of ${topic} has no leader`);
  const startMs = Date.now();
  cluster.pause(node);
  try {
    const stuck = await context.recorder.send({ op: 'delete', id: LATE_ID, instance: 'A', purpose: 'script' });
    const deadline = Date.now() + timing.lateDeliveryDeadlineMs;
    const deleted = await until(context, { op: 'delete', id: LATE_ID, instance: 'B' }, [204, 404], deadline);
    const recreated = await until(context, { op: 'create', id: LATE_ID, name: LATE_FINAL_NAME, instance: 'B' }, [200, 409], deadline);
    const tries = (instance: string, op: string) => context.recorder.requests.filter((r) => r.purpose === 'script' && r.instance === instance && r.op === op && r.sentMs >= startMs).length;
    context.note(
      `late delivery on partition ${partition} (leader node ${node} paused): DELETE via A -> ${stuck.status}; ` +
        `DELETE via B -> ${deleted.status} after ${tries('B', 'delete')} tries; create via B -> ${recreated.status} after ${tries('B', 'create')} tries, ${((Date.now() - startMs) / 1000).toFixed(1)} s into the pause`,
    );
    if (!unknownOutcome(stuck)) context.note(`late delivery not reproduced: the DELETE via A was answered ${stuck.status}`);
  } finally {
    cluster.resume(node);
  }
  return [{ fault: 'SIGSTOP leader, retry via B', targets: [`node ${node}`], startMs, endMs: Date.now(), stuckPartitions: [partition] }];
}
