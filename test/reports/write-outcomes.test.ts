import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WriteOutcomes } from '../../src/reports/write-outcomes.js';

/** A write that began at `startMs` and was answered at `answeredMs`, confirmed or 503. */
function write(outcomes: WriteOutcomes, startMs: number, answeredMs: number, confirmed: boolean): void {
  const ticket = outcomes.started(startMs);
  if (confirmed) outcomes.confirmed(ticket);
  else outcomes.unconfirmed(ticket, answeredMs);
  outcomes.finished(ticket);
}

const answered = suite('WriteOutcomes.failing from answered writes');
answered('is not failing before any write', () => {
  assert.is(new WriteOutcomes(2500, 5000).failing(0), false);
});
answered('is failing once a write begun after the last confirmed one was answered 503', () => {
  const writes = new WriteOutcomes(2500, 5000);
  write(writes, 0, 10, true);
  write(writes, 100, 5100, false);
  assert.is(writes.failing(5100), true);
});
answered('a write begun later and confirmed ends it at once', () => {
  const writes = new WriteOutcomes(2500, 5000);
  write(writes, 100, 5100, false);
  write(writes, 4000, 5200, true);
  assert.is(writes.failing(5200), false);
});
answered(
  'a write begun before the 503 and confirmed after it does not end it (judged in the order writes began)',
  () => {
    const writes = new WriteOutcomes(2500, 5000);
    const early = writes.started(0);
    write(writes, 100, 5100, false);
    writes.confirmed(early);
    writes.finished(early);
    assert.is(writes.failing(5200), true);
  },
);
answered("a 503 with nothing after it stops counting after a while (the log's health decides then)", () => {
  const writes = new WriteOutcomes(2500, 5000);
  write(writes, 100, 5100, false);
  assert.is(writes.failing(10_100), true);
  assert.is(writes.failing(10_101), false);
});
answered('is not failing while writes begun later are confirmed (a stuck partition beside healthy ones)', () => {
  const writes = new WriteOutcomes(2500, 5000);
  for (let t = 0; t < 10_000; t += 100) {
    if (t % 1000 === 0) write(writes, t, t + 50, false);
    write(writes, t + 10, t + 20, true);
  }
  assert.is(writes.failing(10_000), false);
});

const waiting = suite('WriteOutcomes.failing with writes under way');
waiting(
  'is failing once a write has waited longer than the limit with none begun after it confirmed (before its 503)',
  () => {
    const writes = new WriteOutcomes(2500, 5000);
    write(writes, 0, 5, true);
    writes.started(1000);
    assert.is(writes.failing(3500), false);
    assert.is(writes.failing(3501), true);
  },
);
waiting('is not failing for a long wait once a write begun after it is confirmed', () => {
  const writes = new WriteOutcomes(2500, 5000);
  writes.started(0);
  write(writes, 100, 200, true);
  assert.is(writes.failing(5000), false);
});
waiting('a write confirmed that began before the waiting one does not end it', () => {
  const writes = new WriteOutcomes(2500, 5000);
  const early = writes.started(0);
  writes.started(100);
  writes.confirmed(early);
  writes.finished(early);
  assert.is(writes.failing(3000), true);
});
waiting(
  'a voided write counts as confirmed once its request is answered other than 503, and not when it ends in a 503',
  () => {
    const answered = new WriteOutcomes(2500, 5000);
    const slow = answered.started(0);
    const voided = answered.started(1000);
    answered.voided(voided);
    assert.is(answered.failing(3000), true, 'voided, not answered yet: the write begun at 0 has waited 3 s');
    answered.finished(voided);
    assert.is(answered.failing(3000), false, 'the voided request was answered (unchanged, say): writes reach the log');
    answered.finished(slow);

    const failed = new WriteOutcomes(2500, 5000);
    const ticket = failed.started(0);
    failed.voided(ticket);
    failed.unconfirmed(ticket, 5000);
    failed.finished(ticket);
    assert.is(failed.failing(5000), true, 'voided, then answered 503: the 503 counts');
  },
);

waiting('a finished write no longer counts', () => {
  const writes = new WriteOutcomes(2500, 5000);
  const ticket = writes.started(0);
  writes.confirmed(ticket);
  writes.finished(ticket);
  assert.is(writes.failing(10_000), false);
});

answered.run();
waiting.run();
