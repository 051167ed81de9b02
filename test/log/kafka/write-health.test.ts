import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WriteHealth } from '../../../src/log/kafka/write-health.js';

const STUCK_MS = 2000;
const fresh = () => new WriteHealth(3, STUCK_MS, 2);
const replicated = (partitionId: number) => ({ partitionId, leader: 1, isr: [1, 2, 3] });

const verdict = suite('WriteHealth.verdict');
verdict('is idle before anything was written or probed', () => {
  assert.equal(fresh().verdict(0), { kind: 'idle' });
});
verdict('is answering while an acknowledgement is at most the stuck interval old', () => {
  const health = fresh();
  health.sent(0, 1000);
  health.settled(0, true, 1010);
  assert.equal(health.verdict(1010 + STUCK_MS), { kind: 'answering' });
  assert.equal(health.verdict(1011 + STUCK_MS), { kind: 'idle' });
});
verdict('is stuck once a request has waited longer than the stuck interval with nothing answered meanwhile', () => {
  const health = fresh();
  health.sent(1, 5000);
  assert.equal(health.verdict(5000 + STUCK_MS), { kind: 'idle' });
  const stuck = health.verdict(5001 + STUCK_MS);
  assert.is(stuck.kind, 'stuck');
  assert.match((stuck as { reason: string }).reason, /1 of 3 partitions/);
});
verdict(
  'stays answering while other partitions are answered, though one is stuck (a paused leader holds only its partitions)',
  () => {
    const health = fresh();
    health.sent(0, 0);
    for (let t = 100; t <= 10_000; t += 100) {
      health.sent(1, t - 5);
      health.settled(1, true, t);
    }
    assert.equal(health.verdict(10_000), { kind: 'answering' });
  },
);
verdict(
  'is stuck when every request sent since the stuck one waits, though an older one was answered meanwhile (judged in the order sent)',
  () => {
    const health = fresh();
    health.sent(0, 0);
    health.sent(1, 1000);
    health.settled(0, true, 2900);
    assert.is(health.verdict(3001).kind, 'stuck');
  },
);
verdict('is not stuck when a request sent after the waiting one was answered, however long ago', () => {
  const health = fresh();
  health.sent(0, 0);
  health.sent(1, 100);
  health.settled(1, true, 200);
  assert.equal(health.verdict(10_000), { kind: 'idle' });
});
verdict('is no longer stuck once the request settles, answered or not', () => {
  const health = fresh();
  health.sent(2, 0);
  health.settled(2, false, 9000);
  assert.equal(health.verdict(9001), { kind: 'idle' });
});
verdict('is unreplicated when the probe saw no partition with a leader and enough replicas in sync', () => {
  const health = fresh();
  health.probed([{ partitionId: 0, leader: -1, isr: [] }, { partitionId: 1, leader: 2, isr: [2] }, replicated(2)]);
  assert.equal(health.verdict(0), { kind: 'idle' });
  health.probed([
    { partitionId: 0, leader: -1, isr: [] },
    { partitionId: 1, leader: 2, isr: [2] },
    { partitionId: 2, leader: 3, isr: [3] },
  ]);
  assert.equal(health.verdict(0).kind, 'unreplicated');
  health.probed([0, 1, 2].map(replicated));
  assert.equal(health.verdict(0), { kind: 'idle' });
});
verdict('prefers what the writes say to what the probe says', () => {
  const health = fresh();
  health.probed([{ partitionId: 0, leader: -1, isr: [] }]);
  health.sent(0, 0);
  health.settled(0, true, 10);
  assert.equal(health.verdict(20), { kind: 'answering' });
});
verdict('does not change its answer when asked', () => {
  const health = fresh();
  health.sent(0, 0);
  const first = health.verdict(STUCK_MS + 1);
  for (let i = 0; i < 5; i += 1) assert.equal(health.verdict(STUCK_MS + 1), first);
});
verdict.run();
