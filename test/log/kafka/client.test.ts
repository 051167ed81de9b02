// kafkajs' log lines as the service takes them: at debug, but for what the operator needs once.
import kafkajs, { type LogEntry } from 'kafkajs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { logKafkajsEntry } from '../../../src/log/kafka/client.js';
import { BrokerReachability } from '../../../src/log/kafka/brokers.js';
import { memoryLogger } from '../../helpers/server.js';

const { logLevel } = kafkajs;

function entry(namespace: string, level: number, message: string, extra: Record<string, unknown> = {}): LogEntry {
  return {
    namespace,
    level,
    label: 'ERROR',
    log: { timestamp: '2026-11-24T00:00:00.000Z', logger: 'kafkajs', message, ...extra },
  };
}

const mapping = suite('logKafkajsEntry');

mapping('turns a failed connection into one broker warning, and every repeat into debug lines', () => {
  const { logger, lines } = memoryLogger();
  const brokers = new BrokerReachability(logger);
  for (let i = 0; i < 3; i += 1)
    logKafkajsEntry(
      entry('Connection', logLevel.ERROR, 'Connection error: connect ECONNREFUSED 127.0.0.1:9092', {
        broker: '127.0.0.1:9092',
        clientId: 'report-store',
      }),
      logger,
      brokers,
    );
  const levels = lines().map(({ level, msg }) => [level, msg]);
  assert.equal(
    levels.filter(([level]) => (level as number) >= 40),
    [[40, 'a Kafka broker is unreachable']],
  );
  assert.is(levels.filter(([level]) => level === 20).length, 3);
});

mapping('leaves a broker reachable for an error about one response (it carries a correlation id)', () => {
  const { logger } = memoryLogger();
  const brokers = new BrokerReachability(logger);
  logKafkajsEntry(
    entry('Connection', logLevel.ERROR, 'Response Produce(key: 0, version: 7)', {
      broker: 'b:1',
      correlationId: 7,
      error: 'This server is not the leader',
    }),
    logger,
    brokers,
  );
  assert.is(brokers.outages, 0);
});

mapping('keeps a rejected password at error level', () => {
  const { logger, lines } = memoryLogger();
  logKafkajsEntry(
    entry('SaslAuthenticator-PLAIN', logLevel.ERROR, 'SASL PLAIN authentication failed', { broker: 'b:1' }),
    logger,
    undefined,
  );
  assert.equal(
    lines().map(({ level }) => level),
    [50],
  );
});

mapping("puts the client's restarts, rebalances and retries at debug", () => {
  const { logger, lines } = memoryLogger();
  logKafkajsEntry(
    entry('Consumer', logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded: The coordinator is loading'),
    logger,
    undefined,
  );
  logKafkajsEntry(entry('RequestQueue', logLevel.WARN, 'Response without match'), logger, undefined);
  logKafkajsEntry(
    entry('Producer', logLevel.ERROR, 'Failed to send messages: Request Produce(key: 0, version: 7) timed out'),
    logger,
    undefined,
  );
  assert.equal(
    lines().map(({ level }) => level),
    [20, 20, 20],
  );
  assert.equal(lines()[0]?.['namespace'], 'Consumer');
});

mapping.run();
