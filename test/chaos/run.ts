// One fault run: instances on a fresh topic of the cluster, the workload, the scenario's faults,
// the cluster made whole, the writes settled, the instances caught up and stopped cleanly, and the
// topic read back. Gives the history the checker judges.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { jumpingClock, type JumpingClock } from '../helpers/faketime.js';
import type { KafkaCluster } from '../helpers/kafka-cluster.js';
import { openNetFaults, type NetFaults } from '../helpers/net-faults.js';
import type { RunHistory } from './history.js';
import { Instances } from './instances.js';
import { Recorder } from './recorder.js';
import type { FaultContext, Scenario, Timing } from './scenarios.js';
import { readTopic, topicOffsets } from './topic-reader.js';
import { startWorkload } from './workload.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const INSTANCES = ['A', 'B', 'C'];
const WRITE_TIMEOUT_MS = 5000;
const PARTITIONS = 3;

export interface RunResult {
  readonly history: RunHistory;
  readonly notes: readonly string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The topic's end offsets summed; stable for `quietMs` means no write is still on its way. */
async function settledEnd(brokers: string, topic: string, quietMs: number, timeoutMs = 60_000): Promise<number> {
  const kafka = new kafkajs.Kafka({
    clientId: 'chaos-settle',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    let last = -1;
    let since = Date.now();
    for (;;) {
      const end = (await topicOffsets(admin, topic)).reduce((sum, { high }) => sum + Number(high), 0);
      // Past the deadline the end is taken as it is, still moving or not: the instances' catch-up
      // and the checker then say what is wrong, instead of a wait that never ends.
      if (Date.now() > deadline) return end;
      if (end !== last) [last, since] = [end, Date.now()];
      else if (Date.now() - since >= quietMs) return end;
      await sleep(250);
    }
  } finally {
    await admin.disconnect();
  }
}

/** `reports replay --json` on the topic: a fresh process folding it with the service's own code. */
async function replayDigest(brokers: string, topic: string): Promise<string> {
  const env = { PATH: process.env['PATH'] ?? '', KAFKA_BROKERS: brokers, REPORTS_TOPIC: topic, LOG_LEVEL: 'warn' };
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'replay', '--json'], {
    env,
    timeout: 120_000,
    // A first SIGTERM asks the CLI for a clean stop, which could itself wait.
    killSignal: 'SIGKILL',
  });
  return (JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { digest?: string }).digest ?? '';
}

/** The creates `reports events` prints without their content (`P:O`): their key is not in the key topic. */
async function unopenedCreates(brokers: string, topic: string): Promise<string[]> {
  const env = { PATH: process.env['PATH'] ?? '', KAFKA_BROKERS: brokers, REPORTS_TOPIC: topic, LOG_LEVEL: 'warn' };
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'events', '--type', 'ReportCreated'], {
    env,
    timeout: 120_000,
    killSignal: 'SIGKILL',
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { position: string; erased?: boolean; unopenable?: boolean })
    .filter((shown) => shown.erased === true || shown.unopenable === true)
    .map((shown) => shown.position);
}

/** The faults under the workload, until the cluster is whole again and writes went on a while. */
interface Injected {
  readonly clock: JumpingClock | undefined;
  readonly net: NetFaults | undefined;
}

async function underLoad(
  cluster: KafkaCluster,
  instances: Instances,
  scenario: Scenario,
  timing: Timing,
  topic: string,
  { clock, net }: Injected,
  notes: string[],
  log: (line: string) => void,
) {
  const recorder = new Recorder((name) => instances.url(name));
  const writeThrough = scenario.workloadOn ? { writeThrough: scenario.workloadOn } : {};
  const workload = startWorkload({
    recorder,
    instances: INSTANCES,
    ...writeThrough,
    isUp: (name) => instances.url(name) !== undefined,
    ...timing,
  });
  try {
    await sleep(timing.warmUpMs);
    log(`${scenario.name}: warmed up, injecting the faults`);
    const context: FaultContext = {
      cluster,
      instances,
      recorder,
      topic,
      partitions: PARTITIONS,
      timing,
      clock,
      net,
      note: (line) => notes.push(line),
    };
    const faults = await scenario.inject(context).finally(() => net?.heal());
    log(`${scenario.name}: faults done, waiting for the cluster to be whole`);
    await cluster.waitHealthy([topic], 120_000);
    log(`${scenario.name}: the cluster is whole, settling`);
    await sleep(timing.settleMs);
    return { recorder, faults };
  } finally {
    log(`${scenario.name}: stopping the workload`);
    await workload.stop();
  }
}

export async function runScenario(
  cluster: KafkaCluster,
  scenario: Scenario,
  timing: Timing,
  log: (line: string) => void = () => undefined,
): Promise<RunResult> {
  await cluster.waitHealthy();
  const topic = `chaos.${scenario.name}.${randomUUID().slice(0, 8)}`;
  const deferred = scenario.deferred ? { deferred: scenario.deferred } : {};
  const clock = scenario.clockOn === undefined ? undefined : await jumpingClock();
  const clockOn = new Set(scenario.clockOn);
  const extraEnv = (name: string) => ({
    ...(clock !== undefined && clockOn.has(name) ? clock.env : {}),
    ...scenario.envOf?.(name, cluster),
  });
  const userOf = (name: string) => {
    const uid = scenario.users?.[name];
    return uid === undefined ? undefined : { uid, gid: uid };
  };
  const net = scenario.network === true ? await openNetFaults() : undefined;
  log(`${scenario.name}: starting the instances on ${topic}`);
  const instances = await Instances.start({
    names: INSTANCES,
    brokers: cluster.brokers,
    topic,
    writeTimeoutMs: WRITE_TIMEOUT_MS,
    partitions: PARTITIONS,
    extraEnv,
    userOf,
    ...deferred,
  }).catch(async (error: unknown) => {
    await clock?.dispose();
    await net?.close();
    throw error;
  });
  const notes: string[] = [];
  try {
    log(`${scenario.name}: instances up, waiting for the topic to be healthy`);
    await cluster.waitHealthy([topic]);
    log(`${scenario.name}: the workload starts`);
    const { recorder, faults } = await underLoad(
      cluster,
      instances,
      scenario,
      timing,
      topic,
      { clock, net },
      notes,
      log,
    );
    const endMs = Date.now();
    // Writes still on their way (a producer retrying) land before the instances are compared.
    log(`${scenario.name}: waiting for the topic's end to settle`);
    const end = await settledEnd(cluster.brokers, topic, 3000);
    log(`${scenario.name}: waiting for every instance to fold ${end} records`);
    await instances.waitCaughtUp(end);
    log(`${scenario.name}: stopping the instances`);
    const stops = await instances.stopAll();
    log(`${scenario.name}: reading the topic back, replaying it, listing unopened creates`);
    const [contents, replayed, unopened] = await Promise.all([
      readTopic(cluster.brokers, topic),
      replayDigest(cluster.brokers, topic),
      unopenedCreates(cluster.brokers, topic),
    ]);
    const { requests, polls } = recorder;
    const history: RunHistory = {
      scenario: scenario.name,
      partitions: contents.partitions,
      writeTimeoutMs: WRITE_TIMEOUT_MS,
      requests,
      polls,
      faults,
      topic: contents.records,
      topicEnd: contents.end,
      stops,
      replayDigest: replayed,
      unopened,
      endMs,
    };
    return { history, notes: [...instances.startFailures, ...notes] };
  } finally {
    log(`${scenario.name}: removing the instances`);
    await instances.dispose();
    await clock?.dispose();
    await net?.close();
  }
}
