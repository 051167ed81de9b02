// Cursor arithmetic: positions per partition, summed, compared.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cursorLag, cursorPassed, cursorReached, cursorTotal } from '../../src/log/event-log.js';

const cursor = (entries: [number, number][]) => new Map(entries);

const total = suite('cursorTotal');
total('sums the offsets of every partition', () => {
  assert.is(
    cursorTotal(
      cursor([
        [0, 3],
        [1, 0],
        [2, 7],
      ]),
    ),
    10,
  );
});
total('is 0 for an empty cursor', () => {
  assert.is(cursorTotal(cursor([])), 0);
});
total.run();

const lag = suite('cursorLag');
lag('counts what the cursor has not reached, partition by partition', () => {
  assert.is(
    cursorLag(
      cursor([
        [0, 1],
        [1, 5],
      ]),
      cursor([
        [0, 4],
        [1, 5],
        [2, 2],
      ]),
    ),
    5,
  );
});
lag('never counts a partition where the cursor is ahead of the target', () => {
  assert.is(
    cursorLag(
      cursor([
        [0, 9],
        [1, 0],
      ]),
      cursor([
        [0, 4],
        [1, 2],
      ]),
    ),
    2,
  );
});
lag.run();

const compare = suite('cursorReached and cursorPassed');
compare('a cursor reaches a target only on every partition of the target', () => {
  assert.ok(
    cursorReached(
      cursor([
        [0, 4],
        [1, 2],
      ]),
      cursor([
        [0, 4],
        [1, 2],
      ]),
    ),
  );
  assert.not.ok(
    cursorReached(
      cursor([[0, 4]]),
      cursor([
        [0, 4],
        [1, 1],
      ]),
    ),
  );
});
compare('a cursor passes a position once it points beyond it', () => {
  assert.ok(cursorPassed(cursor([[1, 3]]), { partition: 1, offset: 2 }));
  assert.not.ok(cursorPassed(cursor([[1, 3]]), { partition: 1, offset: 3 }));
});
compare.run();
