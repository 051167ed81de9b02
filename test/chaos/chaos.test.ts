// The short form of the cluster fault suite (`make chaos` runs the long form): every scenario once,
// with short faults, on one three-node cluster of its own. Each run is judged from its history
// alone: nothing acknowledged is lost, no late write contradicts what was acknowledged since, all
// instances, `reports replay` and a fresh fold agree, /readyz follows what writes can do, and
// after a leader election the partitions led by healthy brokers keep taking writes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { kafkaAvailable } from '../helpers/kafka-broker.js';
import { startCluster, type KafkaCluster } from '../helpers/kafka-cluster.js';
import { withKafka } from '../helpers/kafka.js';
import { SETTLE_AFTER_FAULT_MS } from './check/availability.js';
import { finalName, judge, type RunVerdict } from './check/verdict.js';
import type { RunHistory } from './history.js';
import { LATE_FINAL_NAME } from './late-delivery.js';
import { runScenario } from './run.js';
import { SCENARIOS, SHORT, type Scenario } from './scenarios.js';
import { describeRun } from './table.js';

/** Issue 17 item 2: the share of writes to healthy-led partitions acknowledged from 8 s after the fault. */
const SETTLED_SHARE = 0.9;
/** A stuck partition's writes are answered within REPORTS_WRITE_TIMEOUT_MS plus this on a loaded machine. */
const ANSWER_SLACK_MS = 2000;

function scenario(name: string): Scenario {
  const found = SCENARIOS.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no scenario ${name}`);
  return found;
}

async function run(cluster: KafkaCluster, name: string): Promise<RunVerdict> {
  return (await runWithHistory(cluster, name)).verdict;
}

async function runWithHistory(cluster: KafkaCluster, name: string): Promise<{ verdict: RunVerdict; history: RunHistory; notes: readonly string[] }> {
  const { history, notes } = await runScenario(cluster, scenario(name), SHORT);
  const verdict = judge(history);
  process.stdout.write(`  ${name}:\n${describeRun(verdict, notes).map((line) => `    ${line}\n`).join('')}`);
  return { verdict, history, notes };
}

/** What every scenario must show: the safety properties and truthful readiness. */
function assertSafeAndTruthful(verdict: RunVerdict): void {
  const details = (items: readonly { detail: string }[]) => items.map((item) => item.detail).join('\n');
  assert.is(verdict.lost.length, 0, `acknowledged writes lost:\n${details(verdict.lost)}`);
  assert.is(verdict.contradictions.length, 0, `late writes contradicting acknowledged ones:\n${details(verdict.contradictions)}`);
  assert.is(verdict.misanswered.length, 0, `answers the history contradicts:\n${details(verdict.misanswered)}`);
  assert.is(verdict.reordered.length + verdict.twoBodies.length, 0, `order or one-winner broken:\n${details([...verdict.reordered, ...verdict.twoBodies])}`);
  assert.is(verdict.unexplainedEvents + verdict.invalidRecords, 0, 'events no request explains');
  assert.equal(verdict.digests.problems, [], 'instances, replay and the fresh fold disagree');
  const readiness = verdict.readiness.map((p) => `${p.instance}: ${p.kind} for ${((p.toMs - p.fromMs) / 1000).toFixed(1)} s (${p.polls} polls)`);
  assert.equal(readiness, [], '/readyz did not follow what writes could do');
}

/** Issue 17 item 2's target, for a fault that moved leadership off a node. */
function assertHealthyPartitionsWrite(verdict: RunVerdict): void {
  for (const fault of verdict.faults) {
    const { acknowledged, failed } = fault.settled;
    assert.ok(acknowledged + failed > 0, `no write to a healthy-led partition was sent from ${SETTLE_AFTER_FAULT_MS} ms after the fault on`);
    const share = acknowledged / (acknowledged + failed);
    assert.ok(share >= SETTLED_SHARE, `${fault.fault}: ${acknowledged} of ${acknowledged + failed} writes to healthy-led partitions acknowledged from ${SETTLE_AFTER_FAULT_MS / 1000} s on (${Math.round(share * 100)} %, target ${SETTLED_SHARE * 100} %)`);
  }
}

withKafka('kafka cluster faults', () => {
  if (!kafkaAvailable()) {
    if (process.env['CI'] === 'true') throw new Error('the cluster fault suite needs Java 17 and the Kafka jars in CI');
    process.stderr.write('\n!!! Java or the Kafka jars are missing: the cluster fault suite (test/chaos) is NOT RUN. !!!\n\n');
    return;
  }
  const faults = suite<{ cluster: KafkaCluster }>('kafka cluster faults (short form)');

  faults.before(async (context) => {
    context.cluster = await startCluster({ name: 'chaos-test', basePort: 39100 });
  });
  faults.after(async ({ cluster }) => {
    await cluster?.close();
  });

  faults('a killed partition leader loses nothing acknowledged, and healthy-led partitions keep taking writes', async ({ cluster }) => {
    const verdict = await run(cluster, 'kill-leader');
    assertSafeAndTruthful(verdict);
    assertHealthyPartitionsWrite(verdict);
  });

  faults('with a leader paused beyond the write timeout, healthy-led partitions take writes from 8 s on and the stuck one answers within the timeout', async ({ cluster }) => {
    const verdict = await run(cluster, 'pause-leader');
    assertHealthyPartitionsWrite(verdict);
    for (const fault of verdict.faults) {
      assert.is(fault.stuckUnanswered, 0, 'writes on the stuck partition got no answer');
      assert.ok((fault.stuckSlowestAnswerMs ?? 0) <= 5000 + ANSWER_SLACK_MS, `a write on the stuck partition was answered after ${fault.stuckSlowestAnswerMs} ms`);
    }
    assertSafeAndTruthful(verdict);
  });

  faults('a DELETE answered 503 that lands after a retry through another instance and a new create undoes nothing (late delivery)', async ({ cluster }) => {
    const { verdict, history, notes } = await runWithHistory(cluster, 'late-delivery');
    const recreated = history.requests.find((r) => r.purpose === 'script' && r.instance === 'B' && r.name === LATE_FINAL_NAME && r.status === 200);
    assert.ok(recreated, `the script did not run as planned: ${notes.join('; ')}`);
    const id = recreated.id;
    const script = verdict.folded.events.filter((event) => event.id === id).map((event) => `${event.request?.op ?? '?'} ${event.request?.status ?? '?'}`);
    assert.is(verdict.contradictions.length, 0, `late writes contradicting acknowledged ones:\n${verdict.contradictions.map((c) => c.detail).join('\n')}`);
    assert.is(finalName(verdict.folded, id), LATE_FINAL_NAME, `report ${id} does not end with the name acknowledged last (its events: ${script.join(', ')})`);
    assertSafeAndTruthful(verdict);
  });

  faults('with two of three brokers down, /readyz turns 503 and back to 200, and nothing acknowledged is lost', async ({ cluster }) => {
    assertSafeAndTruthful(await run(cluster, 'two-down'));
  });

  faults('a rolling restart loses nothing acknowledged, and every write is answered by its own outcome', async ({ cluster }) => {
    assertSafeAndTruthful(await run(cluster, 'rolling-restart'));
  });

  faults('a killed service instance restarts and agrees with the others', async ({ cluster }) => {
    assertSafeAndTruthful(await run(cluster, 'kill-instance'));
  });

  faults.run();
});
