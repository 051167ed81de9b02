// GET /events on Kafka (the cases: feed-cases.ts), on a topic of three partitions each.
import { kafkaEnv, startKafkaServer, uniqueTopic, withKafka } from '../helpers/kafka.js';
import { feedCases } from './feed-cases.js';

withKafka('GET /events', (brokers) => {
  const topics = new Map<string, string>();
  feedCases({
    name: 'Kafka',
    start: async (env = {}) => {
      const topic = uniqueTopic('feed');
      const server = await startKafkaServer(brokers, env, topic);
      topics.set(server.url, topic);
      return server;
    },
    toolEnv: (server) => kafkaEnv(brokers, topics.get(server.url) as string),
  });
});
