import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RecordWaiters } from '../../src/projector/record-waiters.js';
import { ProjectionTimeoutError } from '../../src/projector/projection-timeout.js';
import { rejection } from '../helpers/async.js';

const waiters = suite('RecordWaiters');

waiters('resolves every writer waiting for a position with the outcome of its record', async () => {
  const positions = new RecordWaiters();
  const first = positions.wait({ partition: 1, offset: 7 }, 5000);
  const second = positions.wait({ partition: 1, offset: 7 }, 5000);
  const other = positions.wait({ partition: 2, offset: 7 }, 5000);
  positions.settle({ partition: 1, offset: 7 }, 'created');
  positions.settle({ partition: 2, offset: 7 }, 'void');
  assert.equal(await Promise.all([first, second, other]), ['created', 'created', 'void']);
});

waiters('rejects a writer at its timeout, leaving a writer of the same position waiting', async () => {
  const positions = new RecordWaiters();
  const patient = positions.wait({ partition: 0, offset: 3 }, 5000);
  const hasty = positions.wait({ partition: 0, offset: 3 }, 5);
  const error = await rejection(hasty);
  assert.instance(error, ProjectionTimeoutError);
  assert.equal((error as ProjectionTimeoutError).position, { partition: 0, offset: 3 });
  const earlier = positions.wait({ partition: 0, offset: 3 }, 5000);
  await rejection(positions.wait({ partition: 0, offset: 3 }, 5));
  positions.settle({ partition: 0, offset: 3 }, 'created');
  assert.equal(await Promise.all([patient, earlier]), ['created', 'created']);
});

waiters('remembers the outcomes of the last 4096 offsets of each partition', () => {
  const positions = new RecordWaiters();
  for (let offset = 0; offset < 5000; offset++)
    positions.settle({ partition: 0, offset }, offset % 2 === 0 ? 'created' : 'void');
  positions.settle({ partition: 3, offset: 2 ** 40 }, 'invalid');
  assert.is(positions.outcomeOf({ partition: 0, offset: 4999 }), 'void');
  assert.is(positions.outcomeOf({ partition: 0, offset: 904 }), 'created');
  assert.is(positions.outcomeOf({ partition: 0, offset: 903 }), 'unknown');
  assert.is(positions.outcomeOf({ partition: 0, offset: 5000 }), 'unknown');
  assert.is(positions.outcomeOf({ partition: 3, offset: 2 ** 40 }), 'invalid');
  assert.is(positions.outcomeOf({ partition: 1, offset: 0 }), 'unknown');
});

waiters('rejectAll rejects every writer still waiting', async () => {
  const positions = new RecordWaiters();
  const waiting = [
    positions.wait({ partition: 0, offset: 1 }, 5000),
    positions.wait({ partition: 0, offset: 1 }, 5000),
    positions.wait({ partition: 4, offset: 9 }, 5000),
  ].map(rejection);
  positions.rejectAll();
  for (const error of await Promise.all(waiting)) assert.instance(error, ProjectionTimeoutError);
});

waiters.run();
