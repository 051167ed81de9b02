// Which broker the Kafka suites use: the one named by KAFKA_BROKERS (test/broker/with-kafka.sh
// starts a throw-away one for `make test`). Without one, outside CI, the suites are left out
// with a loud message; in CI that is a failure, never a silent pass.
import { randomUUID } from 'node:crypto';
import kafkajs, { type Admin } from 'kafkajs';
import type { Env } from '../../src/config.js';
import { cursorReached } from '../../src/log/event-log.js';
import { startTestServer, type TestServer } from './server.js';

export const kafkaBrokers = process.env['KAFKA_BROKERS'];
export const kafkaSaslBrokers = process.env['KAFKA_SASL_BROKERS'];

let warned = false;

/** Calls `register` (which defines and runs uvu suites) only when a broker is available. */
export function withKafka(what: string, register: (brokers: string) => void): void {
  if (kafkaBrokers) {
    register(kafkaBrokers);
    return;
  }
  if (process.env['CI'] === 'true')
    throw new Error(`KAFKA_BROKERS is not set in CI: the Kafka suites (${what}) are mandatory`);
  if (!warned) {
    warned = true;
    process.stderr.write(
      '\n!!! KAFKA_BROKERS is not set: the Kafka suites are NOT RUN. Run `make test` with Java 17 and Maven installed, or set KAFKA_BROKERS. !!!\n\n',
    );
  }
}

export function uniqueTopic(prefix: string): string {
  return `test.${prefix}.${randomUUID().slice(0, 8)}`;
}

export function kafkaEnv(brokers: string, topic: string, extra: Env = {}): Env {
  return { KAFKA_BROKERS: brokers, REPORTS_TOPIC: topic, REPORTS_TOPIC_REPLICATION_FACTOR: '1', ...extra };
}

/** A server on Kafka; each gets its own topic unless one is given (several instances share one). */
export function startKafkaServer(brokers: string, env: Env = {}, topic = uniqueTopic('http')): Promise<TestServer> {
  return startTestServer(kafkaEnv(brokers, topic, env));
}

export async function withAdmin<T>(brokers: string, use: (admin: Admin) => Promise<T>): Promise<T> {
  const kafka = new kafkajs.Kafka({
    clientId: 'report-store-tests',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

/** Waits until `server` has applied everything in the log (another instance's writes included). */
export async function caughtUp(server: TestServer, timeoutMs = 15_000): Promise<void> {
  const head = await server.log.head();
  const deadline = Date.now() + timeoutMs;
  while (!cursorReached(server.projector.progress().cursor, head)) {
    if (Date.now() > deadline) throw new Error('the projection did not catch up');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
