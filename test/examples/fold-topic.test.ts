// The README's consumer example folds a real topic to the same digest as `reports replay`, and
// the README quotes this very file.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stateDigest } from '../../src/replay.js';
import { startKafkaServer, uniqueTopic, withKafka } from '../helpers/kafka.js';
import { foldTopic } from './fold-topic.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const readme = suite('README consumer example');
readme('quotes test/examples/fold-topic.ts verbatim', async () => {
  const [text, source] = await Promise.all([readFile(`${root}README.md`, 'utf8'), readFile(`${root}test/examples/fold-topic.ts`, 'utf8')]);
  assert.ok(text.includes(source.trim()), 'README.md does not contain the current test/examples/fold-topic.ts');
});
readme.run();

withKafka('consumer example', (brokers) => {
  const consumer = suite('fold-topic consumer');
  consumer('folds the topic to the digest of the service read model', async () => {
    const topic = uniqueTopic('consumer');
    const server = await startKafkaServer(brokers, {}, topic);
    try {
      for (let id = 1; id <= 30; id += 1) {
        const response = await server.request('/reports', { method: 'POST', json: `{"id": ${id}, "name": "r${id}"${id % 3 === 0 ? ', "tag": "t"' : ''}}` });
        assert.is(response.status, 200);
      }
      for (let id = 1; id <= 30; id += 4) assert.is((await server.request(`/reports/${id}`, { method: 'DELETE' })).status, 204);
      const { reports, digest } = await foldTopic([brokers], topic);
      assert.is(reports.size, server.projector.model.reports.size);
      assert.is(digest, stateDigest(server.projector.model.reports));
    } finally {
      await server.dispose();
    }
  });
  consumer.run();
});
