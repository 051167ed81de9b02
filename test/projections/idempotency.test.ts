import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { evolveIdempotency, outcomeOf, type IdempotencyState } from '../../projections/idempotency.js';
import { evolution, fold, type FoldEvent } from '../../projections/reports.js';
import { basedOn, created, deleted } from '../helpers/events.js';

function keyed<Event extends FoldEvent>(event: Event, key: string): Event {
  return { ...event, data: { ...event.data, idempotencyKey: key } };
}

const outcome = suite('outcomeOf');
outcome('a create that took effect made the report, at the version it gives it', () => {
  const state = fold([created('1', 'a'), deleted('1')]);
  const event = created('1', 'b', 't');
  assert.equal(outcomeOf(state, event, evolution(state, event)), {
    op: 'create',
    id: '1',
    outcome: { kind: 'created', incarnation: 3 },
  });
});
outcome('a create void because the report exists found it, the same or another: no content is remembered', () => {
  const state = fold([created('1', 'a')]);
  for (const event of [created('1', 'a'), created('1', 'b')]) {
    const request = outcomeOf(state, event, evolution(state, event));
    assert.equal(request, { op: 'create', id: '1', outcome: { kind: 'found', incarnation: 1 } });
    assert.not.ok(JSON.stringify(request).includes('"a"'), 'nothing of the name');
  }
});
outcome('a create voided as superseded (the report moved on while it is absent) answers no request', () => {
  const state = fold([created('1', 'theirs'), deleted('1')]);
  const late = basedOn(created('1', 'mine'), 0);
  assert.is(outcomeOf(state, late, evolution(state, late)), undefined);
});
outcome(
  'a delete that took effect deleted; one void because the report is absent found nothing; one void as superseded answers no request',
  () => {
    const state = fold([created('1', 'a'), deleted('1'), created('1', 'b')]);
    const current = basedOn(deleted('1'), 3);
    const late = basedOn(deleted('1'), 1);
    assert.equal(outcomeOf(state, current, evolution(state, current)), {
      op: 'delete',
      id: '1',
      outcome: { kind: 'deleted' },
    });
    assert.is(outcomeOf(state, late, evolution(state, late)), undefined);
    assert.equal(outcomeOf(state, deleted('2'), evolution(state, deleted('2')))?.outcome, { kind: 'not-found' });
    const absent = fold([created('3', 'a'), deleted('3')]);
    const afterDelete = basedOn(deleted('3'), 1);
    assert.equal(outcomeOf(absent, afterDelete, evolution(absent, afterDelete))?.outcome, { kind: 'not-found' });
  },
);
outcome.run();

const evolveKeys = suite('evolveIdempotency');
evolveKeys('records the first event that carries a key and keeps it', () => {
  const keys: IdempotencyState = new Map();
  const state = fold([]);
  const first = keyed(created('1', 'a'), 'k');
  evolveIdempotency(keys, state, first, evolution(state, first));
  const second = keyed(created('2', 'b'), 'k');
  evolveIdempotency(keys, state, second, evolution(state, second));
  assert.equal(keys.get('k'), { op: 'create', id: '1', outcome: { kind: 'created', incarnation: 1 } });
});
evolveKeys('leaves a key to the next event that carries it when the first was void as superseded', () => {
  const keys: IdempotencyState = new Map();
  const state = fold([created('1', 'theirs'), deleted('1')]);
  const stale = keyed(basedOn(created('1', 'mine'), 0), 'k');
  evolveIdempotency(keys, state, stale, evolution(state, stale));
  assert.is(keys.has('k'), false);
  const again = keyed(basedOn(created('1', 'mine'), 2), 'k');
  evolveIdempotency(keys, state, again, evolution(state, again));
  assert.equal(keys.get('k'), { op: 'create', id: '1', outcome: { kind: 'created', incarnation: 3 } });
});
evolveKeys('records nothing for an event without a key', () => {
  const keys: IdempotencyState = new Map();
  const state = fold([]);
  evolveIdempotency(keys, state, created('1', 'a'), evolution(state, created('1', 'a')));
  assert.is(keys.size, 0);
});
evolveKeys.run();
