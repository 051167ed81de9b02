// `make chaos`: the long form of the cluster fault suite. Starts a three-node cluster, runs every
// scenario (or those named) several times, prints what each run found and the table.
//
//   node dist/test/chaos/main.js [--runs 3] [--scenario pause-leader]... [--short] [--base-port 28200] [--history DIR] [--proxy-all]
//
// --proxy-all puts every scenario behind the delay proxies (only slow-lossy-network is, unless given).
//
// --history DIR writes each run's history (every request, answer and /readyz poll with its times,
// and the topic read back) as DIR/<scenario>-<run>.json, to look into what the checker found.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kafkaAvailable } from '../helpers/kafka-broker.js';
import { startCluster, type KafkaCluster } from '../helpers/kafka-cluster.js';
import { judge, type RunVerdict } from './check/verdict.js';
import { runScenario } from './run.js';
import { LONG, SCENARIOS, SHORT, type Scenario } from './scenarios.js';
import { describeRun, formatTable, type ScenarioRow } from './table.js';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      scenario: { type: 'string', multiple: true },
      short: { type: 'boolean' },
      'base-port': { type: 'string', default: '28200' },
      history: { type: 'string' },
      'proxy-all': { type: 'boolean' },
    },
  });
  const runs = Number(values.runs);
  const chosen = SCENARIOS.filter(
    (scenario) => values.scenario === undefined || values.scenario.includes(scenario.name),
  );
  if (!Number.isInteger(runs) || runs < 1 || chosen.length === 0)
    throw new Error(`nothing to run: --runs ${values.runs}, scenarios ${SCENARIOS.map((s) => s.name).join(', ')}`);
  if (!kafkaAvailable()) throw new Error('make chaos needs Java 17+ and the Kafka jars (Maven, or .cache/kafka/libs)');
  const started = Date.now();
  const log = (line: string) =>
    process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  const basePort = Number(values['base-port']);
  const cluster = await startCluster({
    name: 'chaos',
    basePort,
    usersOfTheirOwn: true,
    proxied: values['proxy-all'] === true,
  });
  log(`cluster up: ${cluster.brokers}`);
  // The scenarios that slow the network get a cluster behind delay proxies, started when first needed.
  let proxiedCluster: KafkaCluster | undefined;
  const clusterFor = async (scenario: Scenario) =>
    scenario.proxied === true
      ? (proxiedCluster ??= await startCluster({
          name: 'chaos-proxied',
          basePort: basePort + 50,
          usersOfTheirOwn: true,
          proxied: true,
        }))
      : cluster;
  const rows: ScenarioRow[] = [];
  try {
    for (const scenario of chosen) {
      const verdicts: RunVerdict[] = [];
      for (let run = 1; run <= runs; run += 1) {
        const { history, notes } = await runScenario(
          await clusterFor(scenario),
          scenario,
          values.short === true ? SHORT : LONG,
          log,
        );
        const verdict = judge(history);
        verdicts.push(verdict);
        if (values.history !== undefined) {
          mkdirSync(values.history, { recursive: true });
          writeFileSync(
            join(values.history, `${scenario.name}-${run}.json`),
            JSON.stringify(history, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
          );
        }
        log(`${scenario.name} run ${run}/${runs}:`);
        for (const line of describeRun(verdict, notes)) process.stdout.write(`    ${line}\n`);
      }
      rows.push({ scenario: scenario.name, verdicts });
    }
  } finally {
    await cluster.close();
    await proxiedCluster?.close();
  }
  process.stdout.write(`\n${formatTable(rows)}\n\n${((Date.now() - started) / 1000).toFixed(0)} s in all\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
