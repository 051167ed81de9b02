// docker-compose.yml cannot run here (no Docker engine), so it is checked as text: it may name only
// variables the configuration knows, its ports must be the service's, the broker settings must
// match the ones our own broker script uses, every volume must be where its process writes, and the
// build context (.dockerignore) must hold what the image's build copies and nothing else.
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
  volumes?: string[];
  ports?: string[];
  build?: { context: string; dockerfile_inline?: string };
  depends_on?: Record<string, unknown>;
  init?: boolean;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = suite<{ file: Compose; brokerScript: string; dockerignore: string; gitignore: string }>(
  'docker-compose.yml',
);

compose.before(async (context) => {
  context.file = parse(await read('docker-compose.yml')) as Compose;
  context.brokerScript = await read('test/broker/kafka-broker.sh');
  context.dockerignore = await read('.dockerignore');
  context.gitignore = await read('.gitignore');
});

/** The service's environment as the container gets it (`${VAR:-}` substitutions empty). */
const environmentOf = (service: Service | undefined) =>
  Object.fromEntries(
    Object.entries(service?.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{[^}]*\}/g, '')]),
  );

/**
 * The directory each service's process writes its state to: the broker's log.dirs (the apache/kafka
 * image turns KAFKA_LOG_DIRS into it; unset, it is /tmp/kraft-combined-logs) and the service's
 * REPORTS_DATA_DIR, read as the service reads it.
 */
function stateDirectories(file: Compose): Record<string, string> {
  return {
    kafka: String(file.services['kafka']?.environment?.['KAFKA_LOG_DIRS'] ?? '/tmp/kraft-combined-logs'),
    reports: loadConfig(environmentOf(file.services['reports'])).dataDir,
  };
}

/** Whether a top-level name is in the build context under .dockerignore's rules (the last matching line decides). */
function inContext(dockerignore: string, name: string): boolean {
  let included = true;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
    const matcher = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}$`);
    if (matcher.test(name)) included = negated;
  }
  return included;
}

compose('names only variables the configuration knows', ({ file }) => {
  const environment = file.services['reports']?.environment ?? {};
  const known: readonly string[] = CONFIG_VARIABLES;
  const unknown = Object.keys(environment).filter((name) => !known.includes(name));
  assert.equal(unknown, []);
  assert.ok(Object.keys(environment).length > 0);
});

compose('gives the service a configuration that loads', ({ file }) => {
  const config = loadConfig(environmentOf(file.services['reports']));
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
  const mirrored = [
    'offsets.topic.replication.factor',
    'transaction.state.log.replication.factor',
    'transaction.state.log.min.isr',
    'group.initial.rebalance.delay.ms',
    'share.coordinator.state.topic.replication.factor',
  ];
  for (const property of mirrored) {
    const variable = `KAFKA_${property.toUpperCase().replaceAll('.', '_')}`;
    const inScript = new RegExp(`^${property.replaceAll('.', '\\.')}=(.*)$`, 'm').exec(brokerScript)?.[1];
    assert.is(String(kafka[variable]), inScript, property);
  }
  assert.is(kafka['KAFKA_PROCESS_ROLES'], 'broker,controller');
});

compose('mounts every volume at the directory its process writes, so down and up keep the data', ({ file }) => {
  const writes = stateDirectories(file);
  const mounted: string[] = [];
  for (const [name, service] of Object.entries(file.services)) {
    for (const volume of service.volumes ?? []) {
      const [source = '', target] = volume.split(':');
      mounted.push(source);
      assert.ok(name in writes, `${name} mounts ${volume}, but which directory it writes is not known to this test`);
      assert.is(target, writes[name], `${name}: the volume ${source}`);
    }
  }
  assert.equal(mounted.sort(), Object.keys(file.volumes ?? {}).sort());
  assert.equal(
    Object.keys(writes).filter((name) => !(file.services[name]?.volumes ?? []).length),
    [],
    'a service that writes state has no volume',
  );
});

compose(
  'creates the data directory in the image for the user the service runs as, mode 0700 (a new volume takes its mode)',
  ({ file }) => {
    const dockerfile = file.services['reports']?.build?.dockerfile_inline ?? '';
    const dataDir = stateDirectories(file)['reports'] ?? '';
    const user = /^USER (\S+)$/m.exec(dockerfile)?.[1] ?? 'missing';
    assert.match(dockerfile, new RegExp(`mkdir (?:-p )?-m 700 ${dataDir} && chown ${user}:${user} ${dataDir}\\b`));
  },
);

compose('builds the image on Node 24, the newest LTS the suite runs on, in both stages', async ({ file }) => {
  const dockerfile = file.services['reports']?.build?.dockerfile_inline ?? '';
  const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
  assert.equal(images, ['node:24-bookworm-slim', 'node:24-bookworm-slim']);
  const pkg = JSON.parse(await read('package.json')) as { engines: { node: string } };
  assert.match(pkg.engines.node, /\^24\./);
});

compose(
  'builds the service alone from a context of only what the build copies',
  ({ file, dockerignore, gitignore }) => {
    const dockerfile = file.services['reports']?.build?.dockerfile_inline ?? '';
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) =>
      (match[1] ?? '').split(' '),
    );
    assert.equal(copied, ['package.json', 'package-lock.json', 'tsconfig.json', 'src', 'projections']);
    for (const name of copied)
      assert.ok(inContext(dockerignore, name), `${name} is copied but left out of the context`);
    assert.match(dockerfile, /RUN npm run build:src\b/);
    const ignored = gitignore
      .split('\n')
      .map((line) => line.trim().replace(/\/$/, ''))
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const name of [
      ...ignored,
      'node_modules',
      '.cache',
      'data',
      'dist',
      'coverage',
      '.git',
      'test',
      'README.md',
      'docs',
    ])
      assert.not.ok(inContext(dockerignore, name), `${name} is in the build context`);
  },
);

compose.run();
