import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LogRefusingWritesError } from '../../../src/log/event-log.js';
import { ProbeSilenceError } from '../../../src/log/kafka/errors.js';
import { KafkaHealth } from '../../../src/log/kafka/health.js';
import { WriteHealth } from '../../../src/log/kafka/write-health.js';
import { memoryLogger } from '../../helpers/server.js';

function healthAt(clock: { now: number }) {
  const { logger, lines } = memoryLogger();
  const writes = new WriteHealth(2, 2000, 2);
  return { health: new KafkaHealth(logger, 'reports.events', writes, () => clock.now), writes, lines };
}

const health = suite('KafkaHealth');

health('is available while writes are answered, even when the probe got no answer', () => {
  const clock = { now: 10_000 };
  const { health, writes } = healthAt(clock);
  health.probeFailed(new ProbeSilenceError(2000));
  writes.sent(0, 9_990);
  writes.settled(0, true, 9_995);
  assert.equal(health.current(), { available: true });
});

health('is unavailable while every write waits, even when the probe is answered', () => {
  const clock = { now: 0 };
  const { health, writes } = healthAt(clock);
  health.probeAnswered();
  writes.sent(0, 0);
  clock.now = 2_500;
  const current = health.current();
  assert.is(current.available, false);
  assert.match(current.reason ?? '', /no produce request sent in the last 2000 ms was answered/);
});

health('leaves it to the probe while nothing is written', () => {
  const clock = { now: 0 };
  const { health } = healthAt(clock);
  assert.equal(health.current(), { available: true });
  health.probeFailed(new ProbeSilenceError(2000));
  assert.is(health.current().available, false);
  health.probeAnswered();
  assert.equal(health.current(), { available: true });
});

health('logs each change of availability once, when the probe reports', () => {
  const clock = { now: 0 };
  const { health, writes, lines } = healthAt(clock);
  writes.sent(1, 0);
  clock.now = 3_000;
  health.report();
  health.report();
  writes.settled(1, true, 3_100);
  health.report();
  health.report();
  assert.equal(
    lines().map(({ msg }) => msg),
    ['the Kafka event log became unavailable', 'the Kafka event log is available again'],
  );
});

health('a refusal wins over everything and is logged once by itself', () => {
  const clock = { now: 0 };
  const { health, lines } = healthAt(clock);
  health.refuseWrites(new LogRefusingWritesError('the partition count changed'));
  health.refuseWrites(new LogRefusingWritesError('again'));
  health.report();
  assert.equal(health.current().publicReason, 'the partition count changed');
  assert.throws(() => health.checkWritable(), /partition count changed/);
  assert.is(lines().length, 1);
});

health.run();
