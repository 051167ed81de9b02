// Why the producer is replaced after a failed send (src/log/kafka/renewing-producer.ts), on a real
// broker: a produce request that times out while the broker is frozen is written once it thaws, but
// kafkajs takes its sequence numbers back and gives them to the next request, which the broker then
// answers as a duplicate: with the first one's offset, writing nothing. Renewed, the next request
// goes out under a new producer id and is written.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs, { type Kafka, type Producer } from 'kafkajs';
import { removeOwnBroker, startOwnBroker, type KafkaBroker } from '../helpers/kafka-broker.js';
import { uniqueTopic, withKafka } from '../helpers/kafka.js';
import { RenewingProducer, type Sender } from '../../src/log/kafka/renewing-producer.js';
import { createTopicsSettled } from '../../src/log/kafka/topic.js';

const { Kafka: KafkaClient, logLevel } = kafkajs;

/** A producer that gives up quickly (kafkajs wants an idempotent producer to retry at least once). */
const quitter = (kafka: Kafka): Producer =>
  kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 200 },
  });

/** Sends A; sends B while the broker is frozen (it fails, yet is written once the broker thaws); sends C. What each send was answered, and the topic's values in order. */
async function sendAcrossAFreeze(
  broker: KafkaBroker,
  kafka: Kafka,
  producer: Sender,
): Promise<{ answers: string[]; topic: string[] }> {
  const topic = uniqueTopic('sequence');
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsSettled(admin, { topics: [{ topic, numPartitions: 1 }] });
    await producer.connect();
    const send = (value: string) =>
      producer.send({ topic, acks: -1, messages: [{ value, partition: 0 }] }).then(
        (answer) => `${value} at ${answer[0]?.baseOffset}`,
        () => `${value} failed`,
      );
    const answers = [await send('A')];
    broker.pause();
    try {
      answers.push(await send('B'));
    } finally {
      broker.resume();
    }
    // Long enough for the thawed broker to have handled B's requests.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    answers.push(await send('C'));
    return { answers, topic: await valuesOf(kafka, topic) };
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
}

async function valuesOf(kafka: Kafka, topic: string): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `${topic}-reader`, maxWaitTimeInMs: 100 });
  const values: string[] = [];
  await consumer.connect();
  try {
    const admin = kafka.admin();
    await admin.connect();
    const [{ high } = { high: '0' }] = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          values.push(message.value?.toString() ?? '');
          if (values.length === Number(high)) resolve();
          return Promise.resolve();
        },
      });
    });
    if (Number(high) > 0) await done;
    return values;
  } finally {
    await consumer.disconnect();
  }
}

withKafka('a failed send and the next one', () => {
  const test = suite<{ broker: KafkaBroker; kafka: Kafka }>('kafka: the send after a failed one');

  test.before(async (context) => {
    context.broker = await startOwnBroker('sequence', { onExit: 'kill' });
    context.kafka = new KafkaClient({
      brokers: [context.broker.brokers],
      requestTimeout: 1000,
      logLevel: logLevel.NOTHING,
      retry: { retries: 1 },
    });
  });
  test.after(async ({ broker }) => {
    await removeOwnBroker(broker, 'kill');
  });

  test("kafkajs alone: the next send is answered with the failed one's offset and is not written", async ({
    broker,
    kafka,
  }) => {
    const { answers, topic } = await sendAcrossAFreeze(broker, kafka, quitter(kafka));
    assert.equal(answers, ['A at 0', 'B failed', 'C at 1']);
    assert.equal(topic, ['A', 'B'], 'C was answered as written, yet the topic does not hold it');
  });

  test('renewed after the failure: the next send is written at the offset it is answered', async ({
    broker,
    kafka,
  }) => {
    const producer = new RenewingProducer({ create: () => quitter(kafka) });
    const { answers, topic } = await sendAcrossAFreeze(broker, kafka, producer);
    assert.equal(answers, ['A at 0', 'B failed', 'C at 2']);
    assert.equal(topic, ['A', 'B', 'C']);
    assert.is(producer.renewed(), 1);
  });

  test.run();
});
