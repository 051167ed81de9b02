import { openKafkaLog } from '../../../src/log/kafka/kafka-log.js';
import { loadConfig } from '../../../src/config.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../../helpers/kafka.js';
import { memoryLogger } from '../../helpers/server.js';
import { eventLogContract } from '../event-log.contract.js';

withKafka('EventLog contract', (brokers) => {
  eventLogContract('kafka log', async () => {
    const topic = uniqueTopic('contract');
    const { kafka } = loadConfig(kafkaEnv(brokers, topic));
    const log = await openKafkaLog({ config: kafka!, logger: memoryLogger().logger, writeTimeoutMs: 10_000 });
    return {
      log,
      async dispose() {
        await log.close();
        await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
      },
    };
  });
});
