import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Batcher, sharedRead } from '../../src/log/batcher.js';
import { AppendTimeoutError, LogOverloadedError } from '../../src/log/event-log.js';
import { deferred, rejection, withTimeout } from '../helpers/async.js';

/** A flush that hangs until released, as a stuck fsync or a paused broker does. */
function hungFlush() {
  const release = deferred();
  const flushed: number[][] = [];
  const flush = async (values: number[]) => {
    flushed.push(values);
    await release.promise;
    return values.map((value) => value * 10);
  };
  return { flush, release: () => release.resolve(), flushed };
}

const batcher = suite('Batcher');

batcher('an append whose signal aborts while waiting is rejected at once, not at the next flush', async () => {
  const { flush, release, flushed } = hungFlush();
  const batch = new Batcher(flush);
  const first = batch.add(1);
  const controller = new AbortController();
  const waiting = batch.add(2, controller.signal);
  assert.is(batch.pending, 1);
  controller.abort(new Error('deadline'));
  const error = await withTimeout(rejection(waiting), 1000, 'the aborted append to be rejected');
  assert.is((error as Error).message, 'deadline');
  assert.is(batch.pending, 0);
  release();
  assert.is(await first, 10);
  await batch.idle();
  assert.equal(flushed, [[1]]);
});

batcher('beyond the cap of waiting appends, an append is refused at once with LogOverloadedError', async () => {
  const { flush, release } = hungFlush();
  const batch = new Batcher(flush, { maxPending: 2 });
  const inFlight = batch.add(1);
  const queued = [batch.add(2), batch.add(3)];
  const refused = await rejection(batch.add(4));
  assert.instance(refused, LogOverloadedError);
  assert.is((refused as LogOverloadedError).maxPending, 2);
  release();
  assert.equal(await Promise.all([inFlight, ...queued]), [10, 20, 30]);
  assert.is(await batch.add(5), 50);
});

batcher('an aborted append frees its place under the cap', async () => {
  const { flush, release } = hungFlush();
  const batch = new Batcher(flush, { maxPending: 1 });
  const inFlight = batch.add(1);
  const controller = new AbortController();
  const given = rejection(batch.add(2, controller.signal));
  controller.abort(new Error('gone'));
  await given;
  const next = batch.add(3);
  release();
  assert.equal(await Promise.all([inFlight, next]), [10, 30]);
});

batcher('an append already in a flush when its signal aborts gets the flush result', async () => {
  const { flush, release } = hungFlush();
  const batch = new Batcher(flush);
  const controller = new AbortController();
  const sent = batch.add(7, controller.signal);
  controller.abort(new Error('late'));
  release();
  assert.is(await sent, 70);
});

batcher('a failed flush rejects every append of its batch', async () => {
  const batch = new Batcher<number, number>(() => Promise.reject(new Error('disk gone')));
  const errors = await Promise.all([rejection(batch.add(1)), rejection(batch.add(2))]);
  assert.equal(
    errors.map((error) => (error as Error).message),
    ['disk gone', 'disk gone'],
  );
});

batcher(
  'an append whose timeout passes while waiting is rejected with AppendTimeoutError and leaves the queue',
  async () => {
    const { flush, release, flushed } = hungFlush();
    const batch = new Batcher(flush, { maxPending: 1 });
    const first = batch.add(1);
    const waiting = batch.add(2, undefined, 10);
    assert.is(batch.pending, 1);
    const error = await withTimeout(rejection(waiting), 1000, 'the timed-out append to be rejected');
    assert.instance(error, AppendTimeoutError);
    assert.is((error as AppendTimeoutError).timeoutMs, 10);
    assert.is(batch.pending, 0);
    const next = batch.add(3);
    release();
    assert.equal(await Promise.all([first, next]), [10, 30]);
    assert.equal(flushed, [[1], [3]]);
  },
);

batcher('an append whose timeout passes during its flush is rejected then, without waiting for the flush', async () => {
  const { flush, release } = hungFlush();
  const batch = new Batcher(flush);
  const sent = batch.add(7, undefined, 10);
  const error = await withTimeout(rejection(sent), 1000, 'the append stuck in a flush to be rejected');
  assert.instance(error, AppendTimeoutError);
  release();
  await batch.idle();
});

batcher(
  'an append acknowledged within its timeout resolves, and a timeout that is already over refuses it',
  async () => {
    const batch = new Batcher((values: number[]) => Promise.resolve(values.map((value) => value + 1)));
    assert.is(await batch.add(1, undefined, 1000), 2);
    assert.instance(await rejection(batch.add(1, undefined, 0)), AppendTimeoutError);
    assert.is(batch.pending, 0);
  },
);

batcher.run();

const shared = suite('sharedRead');

shared(
  'callers that arrive while a read is out share the next read, each getting a result read after it asked',
  async () => {
    const reads: ReturnType<typeof deferred<number>>[] = [];
    const read = sharedRead(() => {
      const next = deferred<number>();
      reads.push(next);
      return next.promise;
    });
    const first = read();
    const [second, third] = [read(), read()];
    assert.is(reads.length, 1);
    reads[0]?.resolve(1);
    assert.is(await first, 1);
    // The first read may have been sent before the others asked: they wait for one of their own.
    await new Promise((resolve) => setImmediate(resolve));
    assert.is(reads.length, 2);
    reads[1]?.resolve(2);
    assert.equal(await Promise.all([second, third]), [2, 2]);
  },
);

shared('a failed read fails its callers only; a caller that came while it was out reads again', async () => {
  let calls = 0;
  const read = sharedRead(() =>
    (calls += 1) === 1 ? Promise.reject(new Error('broker away')) : Promise.resolve(calls),
  );
  const [failed, later] = [read(), read()];
  assert.is(((await rejection(failed)) as Error).message, 'broker away');
  assert.is(await later, 2);
});

shared('refuses a caller beyond maxPending at once, as appends are', async () => {
  const hung = deferred<number>();
  const read = sharedRead(() => hung.promise, { maxPending: 1 });
  const inFlight = read();
  const waiting = read();
  assert.instance(await rejection(read()), LogOverloadedError);
  hung.resolve(5);
  assert.equal(await Promise.all([inFlight, waiting]), [5, 5]);
});

shared.run();
