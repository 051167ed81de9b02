import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  cursorFits,
  describeMisfit,
  formatCursor,
  formatPosition,
  parseCursor,
  startMisfit,
} from '../../src/log/positions.js';

const parse = suite('parseCursor');

parse("reads N as the file log's one partition and P:O,… as partitions and offsets", () => {
  assert.equal(parseCursor('17'), new Map([[0, 17]]));
  assert.equal(
    parseCursor('0:4,2:9'),
    new Map([
      [0, 4],
      [2, 9],
    ]),
  );
  assert.equal(
    parseCursor('1:3, 0:2'),
    new Map([
      [1, 3],
      [0, 2],
    ]),
  );
});

parse('refuses what is not a position', () => {
  for (const text of ['', ' ', '-1', '1.5', '1e3', '0x10', 'a', '0:', ':1', '0:1,', '0:1:2', '0:-1', '+1'])
    assert.is(parseCursor(text), undefined, JSON.stringify(text));
});

parse('refuses a number too large to be held exactly, rather than reading another', () => {
  assert.is(parseCursor('9007199254740993'), undefined);
  assert.is(parseCursor('0:99999999999999999999'), undefined);
  assert.is(parseCursor('99999999999999999999:0'), undefined);
  assert.equal(parseCursor('9007199254740991'), new Map([[0, 9007199254740991]]));
});

parse('refuses a partition named twice: which of the two was meant cannot be told', () => {
  assert.is(parseCursor('0:48,0:2'), undefined);
  assert.is(parseCursor('1:1,0:0,1:1'), undefined);
});

parse('cursorFits: the file log has partition 0 alone, Kafka any', () => {
  assert.ok(cursorFits(parseCursor('17') as Map<number, number>, 'file'));
  assert.ok(cursorFits(parseCursor('0:17') as Map<number, number>, 'file'));
  assert.not.ok(cursorFits(parseCursor('5:3') as Map<number, number>, 'file'));
  assert.not.ok(cursorFits(parseCursor('0:1,1:1') as Map<number, number>, 'file'));
  assert.ok(cursorFits(parseCursor('5:3,0:1') as Map<number, number>, 'kafka'));
});

parse.run();

const format = suite('formatPosition and formatCursor');

format('write N on the file log and P:O on Kafka, partitions in order', () => {
  assert.is(formatPosition({ partition: 0, offset: 5 }, 'file'), '5');
  assert.is(formatPosition({ partition: 2, offset: 5 }, 'kafka'), '2:5');
  assert.is(
    formatCursor(
      new Map([
        [2, 1],
        [0, 7],
      ]),
      'kafka',
    ),
    '0:7,2:1',
  );
  assert.equal(
    parseCursor(
      formatCursor(
        new Map([
          [2, 1],
          [0, 7],
        ]),
        'kafka',
      ),
    ),
    new Map([
      [0, 7],
      [2, 1],
    ]),
  );
});

format.run();

const misfit = suite('startMisfit');

misfit('a start at or before the end fits; one past it, or on a partition the log lacks, does not', () => {
  const head = new Map([
    [0, 10],
    [1, 0],
    [2, 3],
  ]);
  assert.is(startMisfit(new Map(), head), undefined);
  assert.is(startMisfit(new Map([[0, 10]]), head), undefined, 'the end itself: nothing yet, then what comes');
  assert.is(startMisfit(new Map([[1, 0]]), head), undefined);
  assert.equal(startMisfit(new Map([[0, 11]]), head), { kind: 'past-end', partition: 0, end: 10 });
  assert.equal(
    startMisfit(
      new Map([
        [0, 1],
        [2, 4],
      ]),
      head,
    ),
    { kind: 'past-end', partition: 2, end: 3 },
  );
  assert.equal(startMisfit(new Map([[3, 0]]), head), { kind: 'no-partition', partition: 3, partitions: 3 });
});

misfit('says in words what is wrong, with the last position in the form of the log', () => {
  assert.is(
    describeMisfit({ kind: 'past-end', partition: 0, end: 10 }, 'file'),
    'is past the end of the log (its last position is 9): a position from another log, or from before a backup was restored',
  );
  assert.match(describeMisfit({ kind: 'past-end', partition: 2, end: 3 }, 'kafka'), 'its last position is 2:2)');
  assert.match(describeMisfit({ kind: 'past-end', partition: 0, end: 0 }, 'file'), 'none: the log is empty');
  assert.match(describeMisfit({ kind: 'past-end', partition: 1, end: 0 }, 'kafka'), 'none on partition 1: it is empty');
  assert.is(
    describeMisfit({ kind: 'no-partition', partition: 7, partitions: 3 }, 'kafka'),
    'names partition 7, which the log does not have (it has partitions 0-2)',
  );
  assert.match(describeMisfit({ kind: 'no-partition', partition: 1, partitions: 1 }, 'kafka'), 'it has partition 0)');
});

misfit.run();
