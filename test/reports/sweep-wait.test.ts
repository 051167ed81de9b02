// While the start's sweep of the keys a crash left behind runs, a delete that would answer without
// writing anything (a 404, the remembered answer of a keyed retry) waits for it: the delete may have
// reached the log just before a crash, and its key may be among those the sweep is destroying.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NotFoundError, UnavailableError } from '../../src/errors.js';
import { rejection } from '../helpers/async.js';
import { startFileLogService, type FileLogService } from '../helpers/file-log-service.js';

const test = suite<{ running: FileLogService }>("ReportService: deletes during the start's sweep");

test.before.each(async (context) => {
  context.running = await startFileLogService('reports-sweep-wait-');
});

test.after.each(async ({ running }) => {
  await running.close();
});

/** A sweep that ends when the test says so. */
function sweep(): { readonly done: Promise<number>; end(): void } {
  const ends: (() => void)[] = [];
  const done = new Promise<number>((resolve) => ends.push(() => resolve(0)));
  return { done, end: () => ends.forEach((end) => end()) };
}

test('a 404 waits for the sweep, and is a 503 when the sweep outlasts the request', async ({ running }) => {
  const { service } = running;
  const slow = sweep();
  service.sweeping(slow.done);
  const answer = await rejection(service.delete('7'));
  assert.instance(answer, UnavailableError, 'a 404 answered while the sweep may still hold the key');
  assert.match((answer as Error).message, /destroying the keys a crash left behind/);
  const waiting = rejection(service.delete('7'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  slow.end();
  assert.instance(await waiting, NotFoundError, 'answered once the sweep is done');
  assert.instance(await rejection(service.delete('7')), NotFoundError, 'no wait once the sweep is done');
});

test("a keyed retry's remembered 204 waits for the sweep; a delete that writes does not", async ({ running }) => {
  const { service } = running;
  await service.create({ id: '1', name: 'Performance review' });
  await service.create({ id: '2', name: 'Another' });
  await service.delete('1', 'delete-1');
  const slow = sweep();
  service.sweeping(slow.done);
  // A delete of a live report writes, and destroys its own key: nothing to wait for.
  await service.delete('2');
  let answered = false;
  const retry = service.delete('1', 'delete-1').then(() => (answered = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.is(answered, false, 'the retry was answered 204 before the sweep was done');
  slow.end();
  await retry;
  assert.is(answered, true);
});

test('after a sweep that failed, a 404 is a 503 until a sweep is done', async ({ running }) => {
  const { service } = running;
  service.sweeping(Promise.reject(new Error('keys.db could not be read')));
  await new Promise((resolve) => setImmediate(resolve));
  assert.instance(await rejection(service.delete('9')), UnavailableError, 'a 404 while the key may be in keys.db');
  assert.is(service.keySweepFailing(), true, 'the failed sweep is not shown to /metrics');
  service.sweeping(Promise.resolve(0));
  assert.is(service.keySweepFailing(), false, 'a sweep tried again is no longer failing');
  await new Promise((resolve) => setImmediate(resolve));
  assert.instance(await rejection(service.delete('9')), NotFoundError);
  assert.is(service.keySweepFailing(), false);
});

test('waiting for the sweep says nothing of the log: readiness stays', async ({ running }) => {
  const { service, clock } = running;
  const slow = sweep();
  service.sweeping(slow.done);
  const waiting = rejection(service.delete('7'));
  await new Promise((resolve) => setTimeout(resolve, 20)); // it now waits for the sweep
  clock.nowMs = 10_000; // the wait outlasts the limit of a write under way (write-outcomes.ts)
  assert.is(service.writesFailing(), false, 'a delete waiting for the sweep counted as a write under way');
  assert.instance(await waiting, UnavailableError);
  assert.is(service.writesFailing(), false, 'its 503 counted as an unconfirmed write');
  slow.end();
});

test.run();
