// The same HTTP contract rows as on the file log, on a real Kafka broker.
import { startKafkaServer, withKafka } from '../helpers/kafka.js';
import { httpContract } from './contract.js';

withKafka('HTTP contract', (brokers) => {
  httpContract('kafka', (env) => startKafkaServer(brokers, env));
});
