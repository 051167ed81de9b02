// The erasure property on Kafka, through the service: after DELETE answers 204, the report's key
// is physically gone from every file of the key topic within REPORTS_KEY_ERASURE_BOUND_MS (short
// here: the test broker's cleaner looks every second), and the event topic never held the name in
// the clear. A create that loses a race to another instance is void, and its key destroyed, as every
// instance sees. A create's key is in its report's partition. What a crash left unerased in the
// history (a delete or a void create whose key was never destroyed) is erased by the next start,
// from the snapshot's list of unerased deletions where a snapshot covers the event; a key no event
// refers to, by the key topic's sweep a while after the start.
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isSealedReport } from '../../projections/reports.js';
import { partitionOfKeyId } from '../../src/keys/kafka-key-ids.js';
import { parseKeyId } from '../../src/keys/key-store.js';
import { partitionOfKey } from '../../src/log/kafka/key-partition.js';
import { brokerRunDir } from '../helpers/kafka-broker.js';
import { loadConfig } from '../../src/config.js';
import { openKafkaKeyStore } from '../../src/keys/kafka-key-store.js';
import { created, deleted } from '../helpers/events.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { appendSealedToTopic, sealedCreate } from '../helpers/sealed-history.js';
import { encodeEvent } from '../../projections/codec.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import { reports } from '../helpers/cli.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';
import { until } from '../helpers/async.js';
import type { TestServer } from '../helpers/server.js';

const BOUND_MS = 12_000;

/** The files of every partition directory of `topic` on the brokers of this checkout. */
async function topicFiles(topic: string): Promise<string[]> {
  const runs = path.dirname(brokerRunDir('any'));
  const files: string[] = [];
  for (const name of await readdir(runs).catch(() => [])) {
    const data = path.join(runs, name, 'data');
    for (const entry of await readdir(data).catch(() => [])) {
      if (!entry.startsWith(`${topic}-`) || !/-\d+$/.test(entry)) continue;
      for (const file of await readdir(path.join(data, entry)).catch(() => []))
        files.push(path.join(data, entry, file));
    }
  }
  return files;
}

async function holding(files: readonly string[], bytes: Buffer): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    const content = await readFile(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      // Gone since the listing: most likely renamed `.deleted` (still on disk), so not taken for empty.
      found.push(`${file} (renamed while searched)`);
      return Buffer.alloc(0);
    });
    if (content.includes(bytes)) found.push(file);
  }
  return found;
}

function sealedKeyOf(server: TestServer, id: string): string {
  const report = server.projector.model.reports.get(id);
  assert.ok(report !== undefined && isSealedReport(report), `report ${id} is sealed`);
  return report.sealed.key;
}

withKafka('erasure on Kafka', (brokers) => {
  const erasure = suite('erasure on Kafka');

  erasure(
    'after the 204 the key leaves every file of the key topic within the bound; the event topic never held the name',
    async () => {
      const topic = uniqueTopic('erasure');
      const server = await startKafkaServer(
        brokers,
        { REPORTS_TOPIC_PARTITIONS: '1', REPORTS_KEY_ERASURE_BOUND_MS: String(BOUND_MS) },
        topic,
      );
      try {
        const keyFiles = await topicFiles(`${topic}.keys`);
        if (keyFiles.length === 0) {
          if (process.env['CI'] === 'true')
            throw new Error(`no files of ${topic}.keys under ${path.dirname(brokerRunDir('any'))}`);
          process.stderr.write(
            `\n!!! erasure on Kafka: the broker at ${brokers} keeps its files elsewhere; the physical erasure is NOT CHECKED !!!\n\n`,
          );
          return;
        }
        assert.is(
          (
            await server.request('/reports', {
              method: 'POST',
              json: '{"id": 77, "name": "Performance review J Smith", "tag": "hr-private"}',
            })
          ).status,
          200,
        );
        assert.is(
          (await server.request('/reports', { method: 'POST', json: '{"id": 78, "name": "kept"}' })).status,
          200,
        );
        const key = await server.keys.get(parseKeyId(sealedKeyOf(server, '77')));
        assert.ok(key !== undefined);
        const secret = Buffer.from(key.secret);
        assert.ok(
          (await holding(await topicFiles(`${topic}.keys`), secret)).length > 0,
          "the key is in the key topic's files before the delete",
        );
        const started = performance.now();
        assert.is((await server.request('/reports/77', { method: 'DELETE' })).status, 204);
        await until(
          async () => (await holding(await topicFiles(`${topic}.keys`), secret)).length === 0,
          `the key of report 77 to leave the key topic's files within ${BOUND_MS} ms`,
          { timeoutMs: BOUND_MS + 5000, everyMs: 250 },
        );
        process.stdout.write(
          `  the key left the key topic's files ${((performance.now() - started) / 1000).toFixed(1)} s after the 204 (bound ${BOUND_MS / 1000} s)\n`,
        );
        for (const marker of ['J Smith', 'hr-private'])
          assert.equal(await holding(await topicFiles(topic), Buffer.from(marker)), [], `${marker} in the event topic`);
        assert.ok(
          (await server.keys.get(parseKeyId(sealedKeyOf(server, '78')))) !== undefined,
          "the other report's key stays",
        );
      } finally {
        await server.dispose();
      }
    },
  );

  erasure(
    'a create that loses a race to another instance is void and its key destroyed, as every instance sees',
    async () => {
      const topic = uniqueTopic('erasure-race');
      const a = await startKafkaServer(brokers, {}, topic);
      const b = await startKafkaServer(brokers, {}, topic);
      try {
        const ids: string[] = [];
        for (let round = 0; round < 10; round += 1) {
          const id = String(5_000 + round);
          const [fromA, fromB] = await Promise.all([
            a.request('/reports', { method: 'POST', json: `{"id": ${id}, "name": "from A"}` }),
            b.request('/reports', { method: 'POST', json: `{"id": ${id}, "name": "from B"}` }),
          ]);
          assert.equal([fromA.status, fromB.status].sort(), [200, 409], `round ${round}`);
          ids.push(id);
        }
        // Every sealed create of the topic that lost is void: its key is gone, as both instances see.
        const { readRecords } = await import('../../src/log/record-batches.js');
        const { decodeEvent } = await import('../../projections/codec.js');
        const keysOfCreates: string[] = [];
        for await (const record of readRecords(a.log, new Map())) {
          const decoded = decodeEvent(record.value);
          if (decoded.ok && decoded.event.type === 'ReportCreated' && 'sealed' in decoded.event.data)
            keysOfCreates.push(decoded.event.data.sealed.key);
        }
        // The winners' keys: those of the live reports.
        const live = new Set(ids.map((id) => sealedKeyOf(a, id)));
        assert.is(keysOfCreates.length, 20, 'twenty creates, two a round');
        for (const server of [a, b]) {
          await until(
            async () => {
              for (const keyText of keysOfCreates) {
                const held = (await server.keys.get(parseKeyId(keyText))) !== undefined;
                if (held !== live.has(keyText)) return false;
              }
              return true;
            },
            "every losing create's key destroyed and every winning one kept",
            { timeoutMs: 10_000, everyMs: 100 },
          );
        }
      } finally {
        await Promise.all([a.dispose(), b.dispose()]);
      }
    },
  );

  erasure(
    'what a crash left unerased in the history (a delete, a void create, their keys never destroyed) is erased once a start has caught up',
    async () => {
      const topic = uniqueTopic('erasure-crash');
      // The topic as a writer that crashed after each append, before destroying the key, leaves it.
      const [smith, kept, racing] = await appendSealedToTopic(brokers, topic, [
        created('91', 'Performance review J Smith', 'hr-private'),
        deleted('91'),
        created('92', 'kept'),
        created('92', 'a racing copy'),
      ]);
      assert.ok(smith !== undefined && kept !== undefined && racing !== undefined);
      try {
        const server = await startKafkaServer(brokers, {}, topic);
        try {
          await until(
            async () =>
              (await server.keys.get(smith.id)) === undefined && (await server.keys.get(racing.id)) === undefined,
            'the keys of the deleted report and of the void create destroyed',
            { timeoutMs: 10_000, everyMs: 100 },
          );
          assert.ok((await server.keys.get(kept.id)) !== undefined, "the live report's key stays");
          assert.is((await server.request('/reports/91', { method: 'DELETE' })).status, 404);
        } finally {
          await server.dispose();
        }
        // The key topic itself says so, read afresh: tombstones, not only this instance's memory.
        const { kafka } = loadConfig(kafkaEnv(brokers, topic));
        assert.ok(kafka !== undefined);
        const keys = await openKafkaKeyStore({ config: kafka, logger: memoryLogger().logger, writeTimeoutMs: 10_000 });
        try {
          assert.equal(
            [await keys.get(smith.id), await keys.get(racing.id)].map((key) => key === undefined),
            [true, true],
          );
          assert.ok((await keys.get(kept.id)) !== undefined);
        } finally {
          await keys.close();
        }
      } finally {
        await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] }));
      }
    },
  );

  erasure(
    "a crash-left delete that a snapshot covers is erased at the start (the snapshot lists it), its retry answered once the key is gone; an orphan key goes after the sweep's wait, a key in use is spared",
    async () => {
      const topic = uniqueTopic('erasure-crash-snapshot');
      const dataDir = await tempDir();
      const [smith, kept] = await appendSealedToTopic(brokers, topic, [
        created('91', 'Performance review J Smith', 'hr-private'),
        { ...deleted('91'), data: { id: '91', idempotencyKey: 'delete-91' } },
        created('92', 'kept'),
      ]);
      assert.ok(smith !== undefined && kept !== undefined);
      const { kafka } = loadConfig(kafkaEnv(brokers, topic));
      assert.ok(kafka !== undefined);
      const logger = memoryLogger().logger;
      const otherKeys = await openKafkaKeyStore({ config: kafka, logger, writeTimeoutMs: 10_000 });
      const otherLog = await openKafkaLog({ config: kafka, logger, writeTimeoutMs: 10_000 });
      try {
        // A crash between a key's put and its create's append: a key no event refers to.
        const orphan = sealedCreate(created('94', 'never appended'), otherKeys);
        await otherKeys.put([orphan.key]);
        // The crashed instance's own snapshot (a periodic one, or the one at its caught-up) covers the delete.
        const snapshot = await reports(['snapshot'], { env: kafkaEnv(brokers, topic, { REPORTS_DATA_DIR: dataDir }) });
        assert.is(snapshot.code, 0, snapshot.stderr);
        assert.match(snapshot.stdout, /keys to destroy: 1 /);
        // Another instance's create on its way: its key is in the key topic, its event not yet.
        const onItsWay = sealedCreate(created('93', 'on its way'), otherKeys);
        await otherKeys.put([onItsWay.key]);
        const server = await startTestServer(
          kafkaEnv(brokers, topic, { REPORTS_KEY_SWEEP_DELAY_MS: '1000', REPORTS_WRITE_TIMEOUT_MS: '1000' }),
          { dataDir },
        );
        try {
          const started = performance.now();
          // The retry of the crashed delete: its 204 only once the key is gone.
          const retry = await server.request('/reports/91', {
            method: 'DELETE',
            headers: { 'Idempotency-Key': 'delete-91' },
          });
          assert.is(retry.status, 204);
          assert.is(await server.keys.get(smith.id), undefined, 'the 204 came while the key was still held');
          assert.ok(
            (await server.keys.get(orphan.key.id)) !== undefined,
            "the orphan key went at the start, before the sweep's wait",
          );
          await otherLog.append([{ key: '93', value: encodeEvent(onItsWay.event) }]);
          await until(
            async () => (await server.keys.get(orphan.key.id)) === undefined,
            "the orphan key destroyed by the key topic's sweep",
            { timeoutMs: 20_000, everyMs: 200 },
          );
          const seconds = (performance.now() - started) / 1000;
          assert.ok(seconds >= 3, `destroyed ${seconds.toFixed(1)} s after the start: before the sweep's wait`);
          assert.ok((await server.keys.get(kept.id)) !== undefined, "the live report's key stays");
          assert.ok((await server.keys.get(onItsWay.key.id)) !== undefined, 'the key of the create on its way stays');
          const landed = await server.request('/reports/93');
          assert.is(landed.status, 200);
          assert.match(await landed.text(), /on its way/);
        } finally {
          await server.dispose();
        }
      } finally {
        await Promise.all([otherLog.close(), otherKeys.close()]);
        await rm(dataDir, { recursive: true, force: true });
        await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] }));
      }
    },
  );

  erasure("a create's key is in the key topic's partition of its report's events", async () => {
    const server = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '3' });
    try {
      const ids = ['1', '2', '3', '4', '5', '6'];
      for (const id of ids)
        assert.is(
          (await server.request('/reports', { method: 'POST', json: `{"id": ${id}, "name": "report ${id}"}` })).status,
          200,
        );
      const partitions = ids.map((id) => partitionOfKey(id, 3));
      assert.equal(new Set(partitions).size, 3, 'the ids span every partition');
      assert.equal(
        ids.map((id) => partitionOfKeyId(sealedKeyOf(server, id), 3)),
        partitions,
      );
    } finally {
      await server.dispose();
    }
  });

  erasure.run();
});
