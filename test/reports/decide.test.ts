import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fold } from '../../projections/reports.js';
import { decideCreate, decideDelete, sameReport } from '../../src/reports/decide.js';
import { created, deleted } from '../helpers/events.js';

const state = fold([created('1', 'plain'), created('2', 'tagged', 't'), created('3', 'gone'), deleted('3')]);

const create = suite('decideCreate');
create('appends for an id that was never created, decided on its version 0', () => {
  assert.equal(decideCreate(state, { id: '9', name: 'n' }), { kind: 'append', expectedVersion: 0 });
});
create('appends for an id that was deleted, decided on the version its delete left', () => {
  assert.equal(decideCreate(state, { id: '3', name: 'gone' }), { kind: 'append', expectedVersion: 2 });
});
create('changes nothing for a retry with the same name and no tag', () => {
  assert.equal(decideCreate(state, { id: '1', name: 'plain' }), { kind: 'unchanged', report: { name: 'plain' } });
});
create('changes nothing for a retry with the same name and tag', () => {
  assert.equal(decideCreate(state, { id: '2', name: 'tagged', tag: 't' }), { kind: 'unchanged', report: { name: 'tagged', tag: 't' } });
});
create('conflicts when the id exists with another name', () => {
  assert.equal(decideCreate(state, { id: '1', name: 'other' }), { kind: 'conflict', existing: { name: 'plain' } });
});
create('conflicts when the retry adds a tag the report does not have', () => {
  assert.is(decideCreate(state, { id: '1', name: 'plain', tag: 't' }).kind, 'conflict');
});
create('conflicts when the retry drops the tag the report has', () => {
  assert.is(decideCreate(state, { id: '2', name: 'tagged' }).kind, 'conflict');
});
create('conflicts when the retry has another tag', () => {
  assert.is(decideCreate(state, { id: '2', name: 'tagged', tag: 'u' }).kind, 'conflict');
});
create('does not change the state', () => {
  decideCreate(state, { id: '9', name: 'n' });
  assert.equal(Object.fromEntries(state), { 1: { name: 'plain' }, 2: { name: 'tagged', tag: 't' } });
});
create.run();

const remove = suite('decideDelete');
remove('appends for an existing report, decided on its current version', () => {
  assert.equal(decideDelete(state, '1'), { kind: 'append', expectedVersion: 1 });
});
remove('answers not-found for an id never created', () => {
  assert.equal(decideDelete(state, '9'), { kind: 'not-found' });
});
remove('answers not-found for an id already deleted', () => {
  assert.equal(decideDelete(state, '3'), { kind: 'not-found' });
});
remove.run();

const same = suite('sameReport');
same('treats an empty tag and an absent tag as different', () => {
  assert.not.ok(sameReport({ name: 'n', tag: '' }, { id: '1', name: 'n' }));
});
same('compares the name exactly, case included', () => {
  assert.not.ok(sameReport({ name: 'N' }, { id: '1', name: 'n' }));
  assert.ok(sameReport({ name: 'n' }, { id: '1', name: 'n' }));
});
same.run();
