// docker-compose.yml cannot run here (no Docker engine), so it is checked as text: it may name only
// variables the configuration knows, its ports must be the service's, and the broker settings must
// match the ones our own broker script uses.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../src/config.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFile(`${root}${path}`, 'utf8');

interface Service {
  environment?: Record<string, string | number>;
  ports?: string[];
  build?: { context: string; dockerfile_inline?: string };
  depends_on?: Record<string, unknown>;
  init?: boolean;
}
interface Compose {
  services: Record<string, Service>;
}

const compose = suite<{ file: Compose; brokerScript: string }>('docker-compose.yml');

compose.before(async (context) => {
  context.file = parse(await read('docker-compose.yml')) as Compose;
  context.brokerScript = await read('test/broker/kafka-broker.sh');
});

compose('names only variables the configuration knows', ({ file }) => {
  const environment = file.services['reports']?.environment ?? {};
  const known: readonly string[] = CONFIG_VARIABLES;
  const unknown = Object.keys(environment).filter((name) => !known.includes(name));
  assert.equal(unknown, []);
  assert.ok(Object.keys(environment).length > 0);
});

compose('gives the service a configuration that loads', ({ file }) => {
  const environment = Object.fromEntries(Object.entries(file.services['reports']?.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{[^}]*\}/g, '')]));
  const config = loadConfig(environment);
  assert.is(config.kafka?.brokers[0], 'kafka:9092');
  assert.is(config.host, '0.0.0.0');
});

compose('publishes the port the service listens on', ({ file }) => {
  const service = file.services['reports'];
  const port = loadConfig({ PORT: String(service?.environment?.['PORT'] ?? '') }).port;
  const published = (service?.ports ?? []).map((mapping) => Number(mapping.split(':').at(-1)));
  assert.equal(published, [port]);
  assert.match(service?.build?.dockerfile_inline ?? '', new RegExp(`EXPOSE ${port}\\b`));
});

compose('points the service at the broker listener that compose defines', ({ file }) => {
  const kafka = file.services['kafka']?.environment ?? {};
  const [host, port] = String(file.services['reports']?.environment?.['KAFKA_BROKERS']).split(':');
  assert.ok(file.services[host ?? ''], `no service named ${host}`);
  assert.match(String(kafka['KAFKA_ADVERTISED_LISTENERS']), `PLAINTEXT://${host}:${port}`);
  assert.ok(file.services['reports']?.depends_on?.['kafka']);
});

compose('runs the service under an init, which forwards signals from the first moment', ({ file }) => {
  assert.is(file.services['reports']?.init, true);
});

compose('starts the same entry point that the build produces', async ({ file }) => {
  const dockerfile = file.services['reports']?.build?.dockerfile_inline ?? '';
  const entry = /CMD \["node", "([^"]+)", "serve"\]/.exec(dockerfile)?.[1];
  assert.is(entry, 'dist/src/cli/main.js');
  const pkg = JSON.parse(await read('package.json')) as { scripts: Record<string, string> };
  assert.match(pkg.scripts['start'] ?? '', entry ?? 'missing');
});

compose('runs Kafka with the single-node settings of the broker script', ({ file, brokerScript }) => {
  const kafka = file.services['kafka']?.environment ?? {};
  const mirrored = ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr', 'group.initial.rebalance.delay.ms', 'share.coordinator.state.topic.replication.factor'];
  for (const property of mirrored) {
    const variable = `KAFKA_${property.toUpperCase().replaceAll('.', '_')}`;
    const inScript = new RegExp(`^${property.replaceAll('.', '\\.')}=(.*)$`, 'm').exec(brokerScript)?.[1];
    assert.is(String(kafka[variable]), inScript, property);
  }
  assert.is(kafka['KAFKA_PROCESS_ROLES'], 'broker,controller');
});

compose.run();
