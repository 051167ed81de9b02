// copyLog into a Kafka topic and its key topic, stopped before any one of its writes (a put of
// keys, an append, a destroy): a server starts on what it left and agrees with `reports replay`,
// and a rerun completes the copy to the source's digest. And from a topic into an embedded log,
// stopped likewise.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Env } from '../../src/config.js';
import { copyLog } from '../../src/migrate/copy-log.js';
import type { MigrationSource } from '../../src/migrate/copy-log.js';
import type { MigrationTarget } from '../../src/migrate/target-writer.js';
import { replaySummary } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import {
  fileSource,
  fileTarget,
  kafkaSource,
  kafkaTarget,
  stoppingAt,
  StoppedHere,
  writeFileSource,
  type Closable,
} from '../helpers/migration.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

type Open<T> = () => Promise<Closable<T>>;

/** Copies from `source` to `target`, stopped at write `stopAt` when given: whether it stopped. */
async function copy(
  openSource: Open<MigrationSource>,
  openTarget: Open<MigrationTarget>,
  stopAt?: number,
): Promise<{ stopped: boolean; digests?: [string, string] }> {
  const [source, target] = [await openSource(), await openTarget()];
  try {
    const end = stopAt === undefined ? target.end : stoppingAt(target.end, stopAt).end;
    const { sourceDigest, targetDigest } = await copyLog(source.end, end, { batch: 10 });
    return { stopped: false, digests: [sourceDigest, targetDigest] };
  } catch (error) {
    if (error instanceof StoppedHere) return { stopped: true };
    throw error;
  } finally {
    await target.close();
    await source.close();
  }
}

/**
 * For each k, a fresh target stopped at its k-th write, checked by `usable` and completed by a rerun;
 * until a copy needs fewer writes than k. Returns how many stops there were.
 */
async function stopEverywhere(
  openSource: Open<MigrationSource>,
  freshTarget: () => Promise<Open<MigrationTarget>>,
  usable: (k: number) => Promise<void>,
): Promise<number> {
  for (let k = 1; ; k += 1) {
    const openTarget = await freshTarget();
    if (!(await copy(openSource, openTarget, k)).stopped) return k - 1;
    await usable(k);
    const { digests } = await copy(openSource, openTarget);
    assert.is(digests?.[1], digests?.[0], `resumed after a stop at write ${k}`);
  }
}

/** Starts a server on what a stopped copy left, and checks it folds to what `reports replay` prints there. */
async function expectUsable(start: () => Promise<TestServer>, env: Env, k: number): Promise<void> {
  const server = await start();
  const digest = await serverDigest(server).finally(() => server.dispose());
  assert.is(`sha256:${(await replaySummary(env)).digest}`, digest, `stopped at write ${k}`);
}

withKafka('copyLog with Kafka', (brokers) => {
  const stops = suite<{ dirs: string[]; topics: string[] }>(
    'copyLog: stopped before any one of its writes, with Kafka',
    { dirs: [], topics: [] },
  );
  stops.after(async ({ dirs, topics }) => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    await withAdmin(brokers, (admin) =>
      admin.deleteTopics({ topics: topics.flatMap((topic) => [topic, `${topic}.keys`]) }),
    );
  });

  stops(
    "into a topic: a server starts on what it left, and a rerun completes it to the source's digest",
    async (context) => {
      const source = await tempDir('reports-copy-kafka-source-');
      context.dirs.push(source);
      await writeFileSource(source);
      let topic = '';
      const fresh = () => {
        topic = uniqueTopic('copy-stops');
        context.topics.push(topic);
        return Promise.resolve(() => kafkaTarget(brokers, topic));
      };
      const count = await stopEverywhere(
        () => fileSource(source),
        fresh,
        (k) => expectUsable(() => startKafkaServer(brokers, {}, topic), kafkaEnv(brokers, topic), k),
      );
      // Two batches of ten: a put of the live keys and an append each (the key topic never sees a key destroyed at once).
      assert.ok(count >= 4, `${count} stops`);
    },
  );

  stops('from a topic into an embedded log: likewise', async (context) => {
    const [source, staged] = [uniqueTopic('copy-stops-source'), await tempDir('reports-copy-kafka-staging-')];
    context.topics.push(source);
    context.dirs.push(staged);
    // The same history, brought into the topic by a copy of its own.
    await writeFileSource(staged);
    assert.is(
      (
        await copy(
          () => fileSource(staged),
          () => kafkaTarget(brokers, source),
        )
      ).stopped,
      false,
    );
    let dir = '';
    const fresh = async () => {
      dir = await tempDir('reports-copy-kafka-target-');
      context.dirs.push(dir);
      return () => fileTarget(dir);
    };
    const count = await stopEverywhere(
      () => kafkaSource(brokers, source),
      fresh,
      (k) => expectUsable(() => startTestServer({}, { dataDir: dir }), { REPORTS_DATA_DIR: dir }, k),
    );
    // Two batches of ten: an append each, and before one of them a write of the keys of content left erased.
    assert.ok(count >= 3, `${count} stops`);
  });

  stops.run();
});
