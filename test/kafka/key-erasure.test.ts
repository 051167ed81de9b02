// THE physical erasure: after a destroy, the 32 secret bytes captured before it are found in no
// file of the broker's data directory for the key topic within REPORTS_KEY_ERASURE_BOUND_MS (the
// test broker's cleaner looks every second: test/broker/kafka-broker.sh). The store rolls the
// tombstone's segment itself (a roll record), since Kafka never cleans the active segment; the
// keys that were not destroyed stay, in the files and for a store opened afterwards.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { brokerRunDir } from '../helpers/kafka-broker.js';
import { digestOf, openTestKeyStore } from '../helpers/kafka-keys.js';
import { uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';

const BOUND_MS = 12_000;
const POLL_MS = 250;

/** The directory of the key topic's partition 0 on a broker of this checkout (.cache/kafka/run/<name>/data/<topic>-0), if any. */
async function partitionDir(topic: string): Promise<string | undefined> {
  const runs = path.dirname(brokerRunDir('any'));
  for (const name of await readdir(runs).catch(() => [])) {
    const dir = path.join(runs, name, 'data', `${topic}-0`);
    if ((await readdir(dir).catch(() => undefined)) !== undefined) return dir;
  }
  return undefined;
}

/**
 * The files of `dir` that hold `bytes`. A file gone between the listing and its read was most
 * likely renamed (a segment is renamed `.deleted` before the broker removes it): the directory is
 * listed again, so that a renamed file is not taken for one that holds nothing.
 */
async function filesHolding(dir: string, bytes: Buffer): Promise<string[]> {
  for (;;) {
    const holding: string[] = [];
    let vanished = false;
    for (const name of await readdir(dir)) {
      const content = await readFile(path.join(dir, name)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        vanished = true;
        return Buffer.alloc(0);
      });
      if (content.includes(bytes)) holding.push(name);
    }
    if (!vanished) return holding;
  }
}

withKafka('key erasure', (brokers) => {
  const erasure = suite('kafka: physical erasure of a destroyed key');

  erasure('a destroyed key leaves every file of the key topic within the bound; the others stay', async () => {
    const topic = uniqueTopic('keys-erasure');
    const { store } = await openTestKeyStore(brokers, topic, {
      REPORTS_TOPIC_PARTITIONS: '1',
      REPORTS_KEY_ERASURE_BOUND_MS: String(BOUND_MS),
    });
    try {
      const dir = await partitionDir(topic);
      if (dir === undefined) {
        // A broker elsewhere (KAFKA_BROKERS set by hand): its files cannot be read from here.
        if (process.env['CI'] === 'true')
          throw new Error(`the key topic ${topic} has no directory under ${path.dirname(brokerRunDir('any'))}`);
        process.stderr.write(
          `\n!!! key erasure: the broker at ${brokers} keeps its files elsewhere; the physical erasure is NOT CHECKED !!!\n\n`,
        );
        return;
      }
      const [before, doomed, after] = ['kept before', 'destroyed', 'kept after'].map((content) =>
        store.mint(digestOf(content)),
      ) as [ReturnType<typeof store.mint>, ReturnType<typeof store.mint>, ReturnType<typeof store.mint>];
      await store.put([before]);
      await store.put([doomed]);
      await store.put([after]);
      const secret = Buffer.from(doomed.secret);
      assert.ok(
        (await filesHolding(dir, secret)).length > 0,
        'the secret is in the files before the destroy (the search finds it)',
      );
      const started = performance.now();
      await store.destroy([doomed.id]);
      // The secret and its digest leave together (they are one record): both are waited for.
      const holdingEither = async () => [
        ...(await filesHolding(dir, secret)),
        ...(await filesHolding(dir, doomed.contentDigest)),
      ];
      let holding = await holdingEither();
      while (holding.length > 0 && performance.now() - started < BOUND_MS + 5000) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        holding = await holdingEither();
      }
      const erasedMs = performance.now() - started;
      process.stdout.write(
        `  [secret gone from every file of ${path.basename(dir)} after ${(erasedMs / 1000).toFixed(1)} s (polled every ${POLL_MS} ms; bound ${BOUND_MS / 1000} s, settings allow ${(store.erasureWithinMs / 1000).toFixed(1)} s); roll records written: ${store.stats().rollRecords}]\n`,
      );
      assert.equal(holding, [], `files still holding the secret or its digest after ${erasedMs.toFixed(0)} ms`);
      assert.ok(erasedMs <= BOUND_MS, `erased after ${erasedMs.toFixed(0)} ms, over the bound of ${BOUND_MS} ms`);
      assert.equal(await filesHolding(dir, doomed.contentDigest), [], 'the digest went with it');
      assert.ok(store.stats().rollRecords >= 1, 'the store rolled the segment');
      for (const kept of [before, after])
        assert.ok((await filesHolding(dir, kept.secret)).length > 0, 'a live key stays in the files');
      const fresh = await openTestKeyStore(brokers, topic);
      assert.equal(await fresh.store.get(before.id), before);
      assert.equal(await fresh.store.get(after.id), after);
      assert.is(await fresh.store.get(doomed.id), undefined);
      await fresh.store.close();
    } finally {
      await store.close();
      await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
    }
  });

  erasure.run();
});
