// REPORTS_KEY_TOPIC and REPORTS_KEY_ERASURE_BOUND_MS: the key topic beside the event topic, and how
// long a destroyed key may stay in its files.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, DEFAULT_KEY_ERASURE_BOUND_MS, loadConfig, type Env } from '../../src/config.js';

function configError(env: Env): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

const keys = suite('loadConfig: the key topic');
const BROKERS = { KAFKA_BROKERS: 'k:9092' };

keys('is <REPORTS_TOPIC>.keys with a bound of a day unless set', () => {
  assert.is(loadConfig(BROKERS).kafka?.keyTopic, 'reports.events.keys');
  assert.is(loadConfig({ ...BROKERS, REPORTS_TOPIC: 'mine' }).kafka?.keyTopic, 'mine.keys');
  assert.is(loadConfig(BROKERS).kafka?.keyErasureBoundMs, DEFAULT_KEY_ERASURE_BOUND_MS);
  assert.is(DEFAULT_KEY_ERASURE_BOUND_MS, 86_400_000);
});

keys('takes REPORTS_KEY_TOPIC and REPORTS_KEY_ERASURE_BOUND_MS as given', () => {
  const kafka = loadConfig({
    ...BROKERS,
    REPORTS_KEY_TOPIC: 'secrets.k',
    REPORTS_KEY_ERASURE_BOUND_MS: '3600000',
  }).kafka;
  assert.is(kafka?.keyTopic, 'secrets.k');
  assert.is(kafka?.keyErasureBoundMs, 3_600_000);
});

keys('refuses a key topic that is no Kafka topic name, or the event topic itself', () => {
  assert.is(configError({ ...BROKERS, REPORTS_KEY_TOPIC: 'a b' }).variable, 'REPORTS_KEY_TOPIC');
  assert.match(
    configError({ ...BROKERS, REPORTS_TOPIC: 'same', REPORTS_KEY_TOPIC: 'same' }).message,
    /must differ from REPORTS_TOPIC/,
  );
  // A 249-character event topic leaves no room for ".keys".
  assert.is(configError({ ...BROKERS, REPORTS_TOPIC: 't'.repeat(249) }).variable, 'REPORTS_KEY_TOPIC');
});

keys('refuses a bound under 10 s, over 30 days, or not an integer', () => {
  for (const value of ['9999', '2592000001', '1e6', ' 60000'])
    assert.is(
      configError({ ...BROKERS, REPORTS_KEY_ERASURE_BOUND_MS: value }).variable,
      'REPORTS_KEY_ERASURE_BOUND_MS',
      value,
    );
});

keys.run();
