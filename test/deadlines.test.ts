import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Deadlines } from '../src/deadlines.js';
import { until, withTimeout } from './helpers/async.js';

// Each test waits for what it expects to happen (a callback, the schedule emptied), not for a fixed
// time: on a busy machine the one timer, re-armed for each next deadline, can fire long after it is due.

const deadlines = suite('Deadlines');

deadlines('calls every deadline once, in time order, whatever order they were scheduled in', async () => {
  const schedule = new Deadlines();
  const called: string[] = [];
  const start = schedule.now();
  schedule.at(start + 30, () => called.push('30'));
  schedule.at(start + 10, () => called.push('10'));
  schedule.at(start + 20, () => called.push('20'));
  schedule.at(start + 20, () => called.push('20 again'));
  assert.is(schedule.size, 4);
  await until(() => called.length === 4, 'every deadline to be called');
  assert.equal(called, ['10', '20', '20 again', '30']);
  assert.is(schedule.size, 0);
});

deadlines('never calls a deadline before its time', async () => {
  const schedule = new Deadlines();
  const late: number[] = [];
  await withTimeout(
    new Promise<void>((resolve) => {
      let left = 20;
      for (let i = 0; i < 20; i++) {
        const atMs = schedule.now() + 1 + (i % 7) * 3;
        schedule.at(atMs, () => {
          late.push(schedule.now() - atMs);
          if (--left === 0) resolve();
        });
      }
    }),
    2000,
    'the deadlines',
  );
  assert.ok(
    late.every((ms) => ms >= 0),
    `called early: ${late.join(', ')}`,
  );
});

deadlines('a cancelled deadline is never called, and cancelling twice or after it fired is harmless', async () => {
  const schedule = new Deadlines();
  const called: string[] = [];
  const first = schedule.after(5, () => called.push('first'));
  const second = schedule.after(10, () => called.push('second'));
  first.cancel();
  first.cancel();
  assert.is(schedule.size, 1);
  // Deadlines are called in time order: once the later one was, the cancelled one had its chance.
  await until(() => called.length > 0, 'the deadline that was kept');
  second.cancel();
  assert.equal(called, ['second']);
  assert.is(schedule.size, 0);
});

deadlines('a deadline scheduled from a callback, or earlier than all others, is still called on time', async () => {
  const schedule = new Deadlines();
  const called: string[] = [];
  schedule.after(1000, () => called.push('late'));
  schedule.after(5, () => {
    called.push('early');
    schedule.after(5, () => called.push('from the callback'));
  });
  await until(() => called.length === 2, 'the early deadline and the one its callback scheduled');
  assert.equal(called, ['early', 'from the callback']);
  schedule.clear();
  assert.is(schedule.size, 0);
});

deadlines('clear drops every deadline without calling it', async () => {
  const schedule = new Deadlines();
  let calls = 0;
  const kept = schedule.after(5, () => (calls += 1));
  schedule.after(5, () => (calls += 1));
  schedule.clear();
  kept.cancel();
  // A later deadline, called in time order after any the clear had left.
  let after = false;
  schedule.after(10, () => (after = true));
  await until(() => after, 'a deadline scheduled after the clear');
  assert.is(calls, 0);
});

deadlines('holds the process open only while deadlines are scheduled', async () => {
  const schedule = new Deadlines();
  assert.is(schedule.holdsProcess, false);
  const first = schedule.after(1000, () => undefined);
  assert.is(schedule.holdsProcess, true);
  first.cancel();
  assert.is(schedule.holdsProcess, false);
  let fired = false;
  schedule.after(5, () => (fired = true));
  assert.is(schedule.holdsProcess, true);
  await until(() => fired, 'the deadline to be called');
  assert.is(schedule.holdsProcess, false);
  const late = schedule.after(2000, () => undefined);
  assert.is(schedule.holdsProcess, true);
  late.cancel();
});

deadlines.run();
