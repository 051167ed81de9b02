// The contradiction check and the count of unacknowledged writes that landed, on histories written by hand.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { contradictions, landedUnknowns } from './contradictions.js';
import { foldTopic } from './fold-topic.js';
import { Story } from './story.js';

const X = '42';

/** Issue 17 item 1: create X; DELETE via A -> 503 (stuck); via B DELETE -> 204, create -> 200; A's DELETE lands last. */
function lateDelete(): Story {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'v1', sentMs: 0, answeredMs: 10, status: 200 });
  const stuck = story.request({ op: 'delete', id: X, instance: 'A', sentMs: 100, answeredMs: 5100, status: 503 });
  story.write({ op: 'delete', id: X, instance: 'B', sentMs: 5200, answeredMs: 5210, status: 204 });
  story.write({ op: 'create', id: X, name: 'v2', instance: 'B', sentMs: 5300, answeredMs: 5310, status: 200 });
  story.land(stuck, 9000);
  return story;
}

const found = suite('contradictions');

found('reports a 503 DELETE that takes effect after a create sent after its answer (issue 17 item 1)', () => {
  const story = lateDelete();
  const [contradiction, ...more] = contradictions(foldTopic(story.topic, story.requests));
  assert.is(more.length, 0);
  assert.is(contradiction?.late.status, 503);
  assert.equal(
    contradiction?.overridden.map((request) => `${request.op} ${request.status}`),
    ['create 200', 'delete 204'],
  );
});

found('reports a late create that brings back a report deleted with acknowledgement since (the mirror case)', () => {
  const story = new Story();
  const stuck = story.request({ op: 'create', id: X, name: 'v1', sentMs: 0, answeredMs: 5000, status: 503 });
  story.write({ op: 'create', id: X, name: 'v1', instance: 'B', sentMs: 5100, answeredMs: 5110, status: 200 });
  story.write({ op: 'delete', id: X, instance: 'B', sentMs: 5200, answeredMs: 5210, status: 204 });
  story.land(stuck, 9000);
  assert.is(contradictions(foldTopic(story.topic, story.requests)).length, 1);
});

found('reports a late DELETE after an acknowledged identical retry whose own event was void', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'v1', sentMs: 0, answeredMs: 10, status: 200 });
  const stuck = story.request({ op: 'delete', id: X, instance: 'A', sentMs: 100, answeredMs: 5100, status: 503 });
  story.write({ op: 'delete', id: X, instance: 'B', sentMs: 5200, answeredMs: 5210, status: 204 });
  story.write({ op: 'create', id: X, name: 'v2', instance: 'B', sentMs: 5300, answeredMs: 10_300, status: 503 });
  story.write({ op: 'create', id: X, name: 'v2', instance: 'C', sentMs: 10_400, answeredMs: 10_410, status: 200 });
  story.land(stuck, 12_000);
  const [contradiction] = contradictions(foldTopic(story.topic, story.requests));
  assert.equal(
    contradiction?.overridden.map((request) => `${request.instance} ${request.op} ${request.status}`),
    ['C create 200', 'B delete 204'],
  );
});

found('accepts a 503 write that took effect before anything acknowledged after its answer', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'v1', sentMs: 0, answeredMs: 10, status: 200 });
  story.write({ op: 'delete', id: X, instance: 'A', sentMs: 100, answeredMs: 5100, status: 503 });
  story.write({ op: 'create', id: X, name: 'v2', instance: 'B', sentMs: 5300, answeredMs: 5310, status: 200 });
  assert.equal(contradictions(foldTopic(story.topic, story.requests)), []);
});

found('accepts a late write the fold voided', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'v1', sentMs: 0, answeredMs: 10, status: 200 });
  const stuck = story.request({
    op: 'create',
    id: X,
    name: 'v0',
    instance: 'A',
    sentMs: 100,
    answeredMs: 5100,
    status: 503,
  });
  story.write({ op: 'create', id: X, name: 'v1', instance: 'B', sentMs: 5200, answeredMs: 5210, status: 200 });
  story.land(stuck, 9000);
  assert.equal(contradictions(foldTopic(story.topic, story.requests)), []);
});

found.run();

const landed = suite('landedUnknowns');

landed('counts the unacknowledged writes that landed, took effect, and how late', () => {
  const story = lateDelete();
  story.request({ op: 'create', id: '7', name: 'never landed', sentMs: 0, answeredMs: 5000, status: 503 });
  assert.equal(landedUnknowns(story.requests, foldTopic(story.topic, story.requests)), {
    unknown: 2,
    landed: 1,
    applied: 1,
    landedAfterAnswer: 1,
    maxLateMs: 3900,
  });
});

landed.run();
