/**
 * Readiness check for the local test broker (used by test/broker/kafka-broker.sh).
 *
 *   node dist/test/broker/wait-ready.js 127.0.0.1:9092 90000
 *
 * Retries a kafkajs admin connect() + describeCluster() until the broker answers
 * (exit 0) or the time budget runs out (exit 1). kafkajs logging is silenced.
 */
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;

const RETRY_PAUSE_MS = 200;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function probe(broker: string, timeoutMs: number): Promise<number> {
  const kafka = new Kafka({
    clientId: 'wait-ready',
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(3000, Math.max(250, timeoutMs)),
    requestTimeout: Math.min(5000, Math.max(250, timeoutMs)),
    retry: { retries: 0 },
  });
  const admin = kafka.admin({ retry: { retries: 0 } });
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const broker = argv[0];
  const timeoutMs = Number(argv[1] ?? '60000');
  if (broker === undefined || !/^[^:\s]+:\d+$/.test(broker) || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    process.stderr.write('usage: wait-ready.js HOST:PORT [TIMEOUT_MS]\n');
    return 2;
  }
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no attempt made';
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    try {
      // A broker that accepts connections but does not answer must not hold us past the deadline.
      const brokers = await Promise.race([
        probe(broker, remaining),
        sleep(remaining).then(() => Promise.reject(new Error('probe timed out'))),
      ]);
      if (brokers > 0) return 0;
      lastError = 'describeCluster returned no brokers';
    } catch (err) {
      lastError = describe(err);
    }
    const left = deadline - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(RETRY_PAUSE_MS, left));
  }
  process.stderr.write(`wait-ready: ${broker} not ready after ${timeoutMs} ms (last error: ${lastError})\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`wait-ready: ${describe(err)}\n`);
    process.exit(1);
  },
);
