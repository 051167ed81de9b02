// The key store that goes with the event log the configuration chose: the embedded log keeps its
// keys itself (keys.db beside events.log, under its lock); on Kafka, the key topic beside the event topic.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import type { EventLog } from '../log/event-log.js';
import type { KeyStore } from './key-store.js';
import { firstSealedCreate } from './sealed-in-history.js';

export async function openKeyStore(log: EventLog, config: Config, logger: Logger): Promise<KeyStore> {
  if (hasKeyCarrier(log)) return log.keyStore();
  if (!config.kafka) throw new Error(`${log.description} keeps no content keys, and no key store goes with it`);
  // Loaded only when used, as the Kafka log is.
  const [{ openKafkaKeyStore }, { openWhenKafkaAnswers }] = await Promise.all([
    import('./kafka-key-store.js'),
    import('../log/kafka/start-retry.js'),
  ]);
  const kafka = config.kafka;
  const retry = {
    timeoutMs: kafka.startTimeoutMs,
    logger,
    brokers: kafka.brokers,
    what: `the key topic ${kafka.keyTopic}`,
  };
  return openWhenKafkaAnswers(
    () =>
      openKafkaKeyStore({
        config: kafka,
        logger,
        writeTimeoutMs: config.writeTimeoutMs,
        maxPendingWrites: config.maxPendingAppends,
        // A missing key topic is created only for a history that never sealed content.
        firstSealed: () => {
          logger.info(
            { keyTopic: kafka.keyTopic, topic: kafka.topic },
            'the key topic is missing: looking for sealed creates in the event topic before creating it',
          );
          return firstSealedCreate(log);
        },
      }),
    retry,
  );
}
