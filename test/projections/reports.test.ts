import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReportEvent } from '../../projections/events.js';
import {
  createState,
  evolution,
  evolve,
  fold,
  type Evolution,
  type ReportContent,
  type StoredReport,
} from '../../projections/reports.js';
import { basedOn, created, deleted } from '../helpers/events.js';

const entries = (state: ReadonlyMap<string, ReportContent>) => Object.fromEntries(state);

interface Row {
  readonly sentence: string;
  readonly history: readonly ReportEvent[];
  readonly event: ReportEvent;
  readonly change: Evolution;
  readonly after: Record<string, StoredReport>;
}

const manyIds = Array.from({ length: 500 }, (_, i) => String(i * 7 - 1000));
const manyState = Object.fromEntries(manyIds.filter((id) => id !== '-993').map((id) => [id, { name: `r${id}` }]));

const rows: readonly Row[] = [
  {
    sentence: 'creates a report on an empty state',
    history: [],
    event: created('1', 'a'),
    change: { kind: 'created', id: '1', report: { name: 'a' } },
    after: { 1: { name: 'a' } },
  },
  {
    sentence: 'treats a create of an existing id as void and keeps the first name',
    history: [created('1', 'first', 't')],
    event: created('1', 'second'),
    change: { kind: 'void', id: '1', reason: 'exists' },
    after: { 1: { name: 'first', tag: 't' } },
  },
  {
    sentence: 'deletes an existing report',
    history: [created('1', 'a'), created('2', 'b')],
    event: deleted('1'),
    change: { kind: 'deleted', id: '1' },
    after: { 2: { name: 'b' } },
  },
  {
    sentence: 'treats a delete of an absent id as void',
    history: [created('2', 'b')],
    event: deleted('1'),
    change: { kind: 'void', id: '1', reason: 'absent' },
    after: { 2: { name: 'b' } },
  },
  {
    sentence: 'treats a second delete of the same id as void',
    history: [created('1', 'a'), deleted('1')],
    event: deleted('1'),
    change: { kind: 'void', id: '1', reason: 'absent' },
    after: {},
  },
  {
    sentence: 'creates an id again after it was deleted, with the new name',
    history: [created('1', 'old', 'x'), deleted('1')],
    event: created('1', 'new'),
    change: { kind: 'created', id: '1', report: { name: 'new' } },
    after: { 1: { name: 'new' } },
  },
  {
    sentence: 'keeps the tag of a created report',
    history: [],
    event: created('5', 'n', 'tagged'),
    change: { kind: 'created', id: '5', report: { name: 'n', tag: 'tagged' } },
    after: { 5: { name: 'n', tag: 'tagged' } },
  },
  {
    sentence: 'keeps an empty name and an empty tag',
    history: [],
    event: created('0', '', ''),
    change: { kind: 'created', id: '0', report: { name: '', tag: '' } },
    after: { 0: { name: '', tag: '' } },
  },
  {
    sentence: 'keeps many ids apart, including the int64 extremes',
    history: [...manyIds.map((id) => created(id, `r${id}`)), created('-9223372036854775808', 'min')],
    event: created('9223372036854775807', 'max'),
    change: { kind: 'created', id: '9223372036854775807', report: { name: 'max' } },
    after: {
      ...manyState,
      '-993': { name: 'r-993' },
      '-9223372036854775808': { name: 'min' },
      '9223372036854775807': { name: 'max' },
    },
  },
  {
    sentence:
      'voids a delete decided on an earlier version: a late delete after a delete and a re-create keeps the new report',
    history: [created('1', 'first'), deleted('1'), created('1', 'second')],
    event: basedOn(deleted('1'), 1),
    change: { kind: 'void', id: '1', reason: 'superseded' },
    after: { 1: { name: 'second' } },
  },
  {
    sentence: 'voids a create decided before a create and a delete: a late create does not bring the report back',
    history: [created('1', 'retried'), deleted('1')],
    event: basedOn(created('1', 'late'), 0),
    change: { kind: 'void', id: '1', reason: 'superseded' },
    after: {},
  },
  {
    sentence: 'applies a delete decided on the current version',
    history: [created('1', 'a')],
    event: basedOn(deleted('1'), 1),
    change: { kind: 'deleted', id: '1' },
    after: {},
  },
  {
    sentence: 'applies a create decided on the current version of a deleted report',
    history: [created('1', 'a'), deleted('1')],
    event: basedOn(created('1', 'again'), 2),
    change: { kind: 'created', id: '1', report: { name: 'again' } },
    after: { 1: { name: 'again' } },
  },
  {
    sentence: 'voids a create of a live report even when it names the current version',
    history: [created('1', 'a')],
    event: basedOn(created('1', 'b'), 1),
    change: { kind: 'void', id: '1', reason: 'exists' },
    after: { 1: { name: 'a' } },
  },
  {
    sentence: 'voids a delete of an absent report even when it names the current version',
    history: [created('1', 'a'), deleted('1')],
    event: basedOn(deleted('1'), 2),
    change: { kind: 'void', id: '1', reason: 'absent' },
    after: {},
  },
];

const evolveSuite = suite('evolve');
for (const row of rows) {
  evolveSuite(row.sentence, () => {
    const state = fold(row.history);
    assert.equal(evolve(state, row.event), row.change);
    assert.equal(entries(state), row.after);
  });
}
evolveSuite('stores no tag property when the event has none', () => {
  const state = createState();
  evolve(state, created('1', 'a'));
  assert.not.ok('tag' in (state.get('1') ?? {}));
});
evolveSuite('does not store the idempotency key of an event', () => {
  const event = created('1', 'a');
  const state = fold([{ ...event, data: { ...event.data, idempotencyKey: 'k-1' } }]);
  assert.equal(entries(state), { 1: { name: 'a' } });
});
evolveSuite('judges events without a basis by existence alone, as before the rule', () => {
  const state = fold([created('1', 'a'), deleted('1'), created('1', 'b')]);
  assert.equal(evolve(state, deleted('1')), { kind: 'deleted', id: '1' });
});
evolveSuite.run();

const versions = suite('createState (versions)');
versions('counts the events that took effect on each id, and keeps the count after a delete', () => {
  const state = fold([created('1', 'a'), created('2', 'b'), deleted('1'), created('1', 'c'), deleted('1')]);
  assert.is(state.version('1'), 4);
  assert.is(state.version('2'), 1);
  assert.is(state.version('3'), 0);
  assert.is(state.size, 1);
});
versions('leaves the version as it is for a void event', () => {
  const state = fold([created('1', 'a'), created('1', 'again'), deleted('2'), basedOn(deleted('1'), 0)]);
  assert.is(state.version('1'), 1);
  assert.is(state.version('2'), 0);
});
versions('forgets every version when cleared', () => {
  const state = fold([created('1', 'a'), deleted('1')]);
  state.clear();
  assert.is(state.version('1'), 0);
});
versions.run();

const evolutionSuite = suite('evolution');
for (const row of rows) {
  evolutionSuite(`${row.sentence} (decided without changing the state)`, () => {
    const state = fold(row.history);
    const before = entries(state);
    assert.equal(evolution(state, row.event), row.change);
    assert.equal(entries(state), before);
  });
}
evolutionSuite.run();

const foldSuite = suite('fold');
foldSuite('folds a history from an empty state', () => {
  const state = fold([created('1', 'a'), created('2', 'b', 't'), deleted('1'), created('2', 'ignored'), deleted('3')]);
  assert.equal(entries(state), { 2: { name: 'b', tag: 't' } });
});
foldSuite('continues from a given state and returns that same map', () => {
  const start = fold([created('1', 'a')]);
  const result = fold([created('2', 'b')], start);
  assert.is(result, start);
  assert.equal(entries(result), { 1: { name: 'a' }, 2: { name: 'b' } });
});
foldSuite('returns an empty state for an empty history', () => {
  assert.is(fold([]).size, 0);
});
foldSuite.run();
