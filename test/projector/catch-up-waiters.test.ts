import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CatchUpWaiters } from '../../src/projector/catch-up-waiters.js';
import { ProjectionTimeoutError } from '../../src/projector/projection-timeout.js';
import { rejection } from '../helpers/async.js';

const waiters = suite('CatchUpWaiters');

waiters('resolves at once when the cursor is at the target, else once it moves there', async () => {
  const cursorWaiters = new CatchUpWaiters();
  await cursorWaiters.wait(new Map([[0, 5]]), new Map([[0, 5]]), 1000);
  const waiting = cursorWaiters.wait(new Map([[0, 5]]), new Map([[0, 7]]), 5000);
  cursorWaiters.moved(new Map([[0, 6]]));
  cursorWaiters.moved(new Map([[0, 7]]));
  await waiting;
});

waiters('rejects with ProjectionTimeoutError after the timeout and on rejectAll', async () => {
  const cursorWaiters = new CatchUpWaiters();
  const late = await rejection(cursorWaiters.wait(new Map(), new Map([[2, 3]]), 5));
  assert.instance(late, ProjectionTimeoutError);
  assert.equal((late as ProjectionTimeoutError).position, { partition: 2, offset: 3 });
  const stopped = rejection(cursorWaiters.wait(new Map(), new Map([[0, 1]]), 5000));
  cursorWaiters.rejectAll();
  assert.instance(await stopped, ProjectionTimeoutError);
});

waiters.run();
