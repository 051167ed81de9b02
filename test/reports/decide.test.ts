import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StoredReport } from '../../projections/reports.js';
import {
  answerReplayedCreate,
  decideCreate,
  decideDelete,
  decideKey,
  decideRead,
  failedPrecondition,
  sameReport,
  type ReportView,
  type VersionCondition,
} from '../../src/reports/decide.js';

const absent = (version = 0): ReportView => ({ version, live: false });
const live = (content: StoredReport | undefined, version = 1): ReportView =>
  content === undefined ? { version, live: true } : { version, live: true, content };

const create = suite('decideCreate');
create('appends for an id that was never created, decided on its version 0', () => {
  assert.equal(decideCreate(absent(), { id: '9', name: 'n' }), { kind: 'append', expectedVersion: 0 });
});
create('appends for an id that was deleted, decided on the version its delete left', () => {
  assert.equal(decideCreate(absent(2), { id: '3', name: 'gone' }), { kind: 'append', expectedVersion: 2 });
});
create('changes nothing for a retry with the same name and no tag', () => {
  assert.equal(decideCreate(live({ name: 'plain' }), { id: '1', name: 'plain' }), {
    kind: 'unchanged',
    report: { name: 'plain' },
  });
});
create('changes nothing for a retry with the same name and tag', () => {
  assert.equal(decideCreate(live({ name: 'tagged', tag: 't' }), { id: '2', name: 'tagged', tag: 't' }), {
    kind: 'unchanged',
    report: { name: 'tagged', tag: 't' },
  });
});
create('conflicts when the id exists with another name', () => {
  assert.equal(decideCreate(live({ name: 'plain' }), { id: '1', name: 'other' }), { kind: 'conflict' });
});
create('conflicts when the retry adds a tag the report does not have, drops the one it has, or has another', () => {
  assert.is(decideCreate(live({ name: 'plain' }), { id: '1', name: 'plain', tag: 't' }).kind, 'conflict');
  assert.is(decideCreate(live({ name: 'tagged', tag: 't' }), { id: '2', name: 'tagged' }).kind, 'conflict');
  assert.is(decideCreate(live({ name: 'tagged', tag: 't' }), { id: '2', name: 'tagged', tag: 'u' }).kind, 'conflict');
});
create('conflicts when the report exists and its content cannot be opened (its key is missing)', () => {
  assert.is(decideCreate(live(undefined), { id: '1', name: 'anything' }).kind, 'conflict');
});
create.run();

const remove = suite('decideDelete');
remove('appends for an existing report, decided on its current version', () => {
  assert.equal(decideDelete(live({ name: 'x' }, 3)), { kind: 'append', expectedVersion: 3 });
  assert.equal(decideDelete(live(undefined, 5)), { kind: 'append', expectedVersion: 5 });
});
remove('answers not-found for an id never created or already deleted', () => {
  assert.equal(decideDelete(absent()), { kind: 'not-found' });
  assert.equal(decideDelete(absent(2)), { kind: 'not-found' });
});
remove.run();

const ANY: VersionCondition = { kind: 'any' };
const versions = (...list: number[]): VersionCondition => ({ kind: 'versions', versions: list });

const conditions = suite('failedPrecondition');
conditions('If-Match holds for a live report at a version it names, or for any live report with *', () => {
  assert.is(failedPrecondition(live({ name: 'x' }, 3), { ifMatch: versions(1, 3) }), undefined);
  assert.is(failedPrecondition(live({ name: 'x' }, 3), { ifMatch: ANY }), undefined);
  assert.is(failedPrecondition(live({ name: 'x' }, 3), { ifMatch: versions(1) }), 'if-match');
  assert.is(failedPrecondition(live({ name: 'x' }, 3), { ifMatch: versions() }), 'if-match');
});
conditions('If-Match never holds for an absent report, even at the version its delete left', () => {
  assert.is(failedPrecondition(absent(2), { ifMatch: versions(2) }), 'if-match');
  assert.is(failedPrecondition(absent(), { ifMatch: ANY }), 'if-match');
});
conditions('If-None-Match fails for a live report it names (or with *), and holds for an absent one', () => {
  assert.is(failedPrecondition(live({ name: 'x' }, 1), { ifNoneMatch: versions(1) }), 'if-none-match');
  assert.is(failedPrecondition(live({ name: 'x' }, 1), { ifNoneMatch: ANY }), 'if-none-match');
  assert.is(failedPrecondition(live({ name: 'x' }, 1), { ifNoneMatch: versions(3) }), undefined);
  assert.is(failedPrecondition(absent(2), { ifNoneMatch: ANY }), undefined);
});
conditions('evaluates If-Match before If-None-Match (RFC 9110 13.2.2)', () => {
  assert.is(failedPrecondition(live({ name: 'x' }, 1), { ifMatch: versions(3), ifNoneMatch: versions(1) }), 'if-match');
});
conditions.run();

const conditional = suite('decideDelete, decideCreate and decideRead with preconditions');
conditional(
  'a delete whose If-Match names the version appends decided on it; another version is precondition-failed',
  () => {
    assert.equal(decideDelete(live(undefined, 3), { ifMatch: versions(3) }), { kind: 'append', expectedVersion: 3 });
    assert.equal(decideDelete(live(undefined, 3), { ifMatch: versions(1) }), {
      kind: 'precondition-failed',
      failed: 'if-match',
    });
  },
);
conditional('a delete of an absent report is not-found whatever its preconditions', () => {
  assert.equal(decideDelete(absent(2), { ifMatch: versions(1) }), { kind: 'not-found' });
  assert.equal(decideDelete(absent(), { ifNoneMatch: ANY }), { kind: 'not-found' });
});
conditional('a create with a failing precondition is precondition-failed before the body is compared', () => {
  assert.equal(decideCreate(live({ name: 'x' }, 3), { id: '1', name: 'other' }, { ifMatch: versions(1) }), {
    kind: 'precondition-failed',
    failed: 'if-match',
  });
  assert.equal(decideCreate(live({ name: 'x' }, 3), { id: '1', name: 'x' }, { ifNoneMatch: ANY }), {
    kind: 'precondition-failed',
    failed: 'if-none-match',
  });
  assert.equal(decideCreate(absent(2), { id: '1', name: 'x' }, { ifMatch: ANY }), {
    kind: 'precondition-failed',
    failed: 'if-match',
  });
});
conditional('a create whose preconditions hold decides as without them', () => {
  assert.equal(decideCreate(live({ name: 'x' }, 3), { id: '1', name: 'x' }, { ifMatch: versions(3) }), {
    kind: 'unchanged',
    report: { name: 'x' },
  });
  assert.equal(decideCreate(live({ name: 'x' }, 3), { id: '1', name: 'y' }, { ifMatch: ANY }), { kind: 'conflict' });
  assert.equal(decideCreate(absent(2), { id: '1', name: 'x' }, { ifNoneMatch: ANY }), {
    kind: 'append',
    expectedVersion: 2,
  });
});
conditional(
  'a read answers the version of a live report, not-modified when If-None-Match names it, not-found when absent',
  () => {
    assert.equal(decideRead(live(undefined, 5)), { kind: 'read', version: 5 });
    assert.equal(decideRead(live(undefined, 5), { ifNoneMatch: versions(5) }), { kind: 'not-modified', version: 5 });
    assert.equal(decideRead(live(undefined, 5), { ifNoneMatch: versions(3) }), { kind: 'read', version: 5 });
    assert.equal(decideRead(live(undefined, 5), { ifMatch: versions(3) }), {
      kind: 'precondition-failed',
      failed: 'if-match',
    });
    assert.equal(decideRead(absent(4), { ifNoneMatch: ANY }), { kind: 'not-found' });
  },
);
conditional.run();

const keyed = suite('decideKey and answerReplayedCreate');
keyed('a key seen before replays for the same kind of request on the same report, and is a mismatch otherwise', () => {
  const keys = new Map([
    ['k', { op: 'create' as const, id: '1', outcome: { kind: 'created' as const, incarnation: 1 } }],
  ]);
  assert.equal(decideKey(keys, undefined, { op: 'create', id: '1' }), { kind: 'new' });
  assert.equal(decideKey(keys, 'other', { op: 'create', id: '1' }), { kind: 'new' });
  assert.equal(decideKey(keys, 'k', { op: 'create', id: '1' }), { kind: 'replay', request: keys.get('k') });
  assert.equal(decideKey(keys, 'k', { op: 'create', id: '2' }), { kind: 'mismatch' });
  assert.equal(decideKey(keys, 'k', { op: 'delete', id: '1' }), { kind: 'mismatch' });
});
keyed(
  'a retry of a create that made the report answers it again while it is that report, and 422 for another body',
  () => {
    const request = { op: 'create' as const, id: '1', outcome: { kind: 'created' as const, incarnation: 3 } };
    assert.equal(answerReplayedCreate(request, live({ name: 'a' }, 3), { id: '1', name: 'a' }), {
      kind: 'unchanged',
      report: { name: 'a' },
    });
    assert.equal(answerReplayedCreate(request, live({ name: 'a' }, 3), { id: '1', name: 'b' }), { kind: 'mismatch' });
  },
);
keyed(
  'a retry of a create whose report was deleted since (and perhaps created again) is told so, and nothing is compared',
  () => {
    const request = { op: 'create' as const, id: '1', outcome: { kind: 'created' as const, incarnation: 3 } };
    assert.equal(answerReplayedCreate(request, absent(4), { id: '1', name: 'a' }), { kind: 'deleted-since' });
    assert.equal(answerReplayedCreate(request, live({ name: 'a' }, 5), { id: '1', name: 'a' }), {
      kind: 'deleted-since',
    });
  },
);
keyed('a retry of a create that found the report in place: 200 for its body, the conflict again for another', () => {
  const request = { op: 'create' as const, id: '1', outcome: { kind: 'found' as const, incarnation: 1 } };
  assert.equal(answerReplayedCreate(request, live({ name: 'a' }), { id: '1', name: 'a' }), {
    kind: 'unchanged',
    report: { name: 'a' },
  });
  assert.equal(answerReplayedCreate(request, live({ name: 'a' }), { id: '1', name: 'b' }), { kind: 'conflict' });
  assert.equal(answerReplayedCreate(request, live(undefined), { id: '1', name: 'a' }), { kind: 'conflict' });
});
keyed.run();

const same = suite('sameReport');
same('treats an empty tag and an absent tag as different', () => {
  assert.not.ok(sameReport({ name: 'n', tag: '' }, { id: '1', name: 'n' }));
});
same('compares the name exactly, case included', () => {
  assert.not.ok(sameReport({ name: 'N' }, { id: '1', name: 'n' }));
  assert.ok(sameReport({ name: 'n' }, { id: '1', name: 'n' }));
});
same.run();
