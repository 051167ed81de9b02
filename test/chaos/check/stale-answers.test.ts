// The real-time order check (e) and the events of a request decided again, on histories written by hand.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { foldTopic } from './fold-topic.js';
import { staleAnswers } from './stale-answers.js';
import { Story } from './story.js';

const X = '42';
const staleOf = (story: Story) => staleAnswers(story.requests, foldTopic(story.topic, story.requests));

const stale = suite('staleAnswers');

stale('flags a 404 to a delete sent after a create was acknowledged, with no write in between', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', instance: 'C', sentMs: 0, answeredMs: 10, status: 200 });
  story.request({ op: 'delete', id: X, instance: 'A', sentMs: 20, answeredMs: 30, status: 404 });
  const problems = staleOf(story);
  assert.equal(
    problems.map((p) => p.kind),
    ['stale'],
  );
  assert.match(problems[0]?.detail ?? '', /delete 42 via A -> 404 .* while the report was "a"/);
});

stale(
  'flags a 409 to a create while the report was absent all along (a superseded write answered from its void)',
  () => {
    const story = new Story();
    story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 200 });
    story.write({ op: 'delete', id: X, sentMs: 20, answeredMs: 30, status: 204 });
    const late = story.request({ op: 'create', id: X, name: 'b', sentMs: 40, answeredMs: 50, status: 409 });
    story.land(late, 45, 0, 0);
    assert.equal(
      staleOf(story).map((p) => p.kind),
      ['stale'],
    );
  },
);

stale('accepts a 404 when a concurrent delete landed during the request, and a 409 while another body exists', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 200 });
  story.request({ op: 'delete', id: X, instance: 'A', sentMs: 20, answeredMs: 40, status: 404 });
  story.write({ op: 'delete', id: X, instance: 'B', sentMs: 21, answeredMs: 30, status: 204 });
  story.write({ op: 'create', id: X, name: 'c', sentMs: 50, answeredMs: 60, status: 200 });
  story.request({ op: 'create', id: X, name: 'd', sentMs: 70, answeredMs: 80, status: 409 });
  assert.equal(staleOf(story), []);
});

stale(
  'flags a 200 for a body that was never in place during the request, and ignores answers that claim nothing (503)',
  () => {
    const story = new Story();
    story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 200 });
    story.request({ op: 'create', id: X, name: 'b', sentMs: 20, answeredMs: 30, status: 200 });
    story.request({ op: 'delete', id: X, sentMs: 40, answeredMs: 5040, status: 503 });
    assert.equal(
      staleOf(story).map((p) => p.kind),
      ['stale'],
    );
  },
);

stale.run();

const attempts = suite('foldTopic: a request decided again');

attempts('judges a request by its last event when the earlier ones are void', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 200 });
  story.write({ op: 'delete', id: X, sentMs: 20, answeredMs: 30, status: 204 });
  const again = story.request({
    op: 'create',
    id: X,
    name: 'b',
    instance: 'C',
    sentMs: 40,
    answeredMs: 60,
    status: 200,
  });
  story.land(again, 45, 0, 0).land(again, 55, 0, 2);
  const folded = foldTopic(story.topic, story.requests);
  assert.is(folded.byRequest.get(again.seq)?.offset, 3);
  assert.is(folded.byRequest.get(again.seq)?.effective, true);
  assert.equal(folded.unexplained, []);
  assert.equal(staleAnswers(story.requests, folded), []);
});

attempts('counts an earlier event of a request that took effect as unexplained (a request takes effect once)', () => {
  const story = new Story();
  const twice = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 30, status: 200 });
  story.land(twice, 10).land(twice, 20);
  assert.equal(
    foldTopic(story.topic, story.requests).unexplained.map((event) => event.offset),
    [0],
  );
});

attempts("takes a copy of an event (a producer wrote it twice) for no attempt: its first copy is the request's", () => {
  const story = new Story();
  const once = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 30, status: 200 });
  story.land(once, 10, 0, 0).copy(0, 20);
  const folded = foldTopic(story.topic, story.requests);
  assert.is(folded.byRequest.get(once.seq)?.offset, 0);
  assert.is(folded.byRequest.get(once.seq)?.effective, true);
  assert.equal(folded.unexplained, []);
  assert.equal(staleAnswers(story.requests, folded), []);
});

attempts('counts a copy of an event that took effect again as unexplained', () => {
  const story = new Story();
  // Without a basis, the copy after the delete makes the report again: no request asked for that.
  const create = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 30, status: 200 });
  story.land(create, 10);
  story.write({ op: 'delete', id: X, sentMs: 40, answeredMs: 50, status: 204 });
  story.copy(0, 60);
  assert.equal(
    foldTopic(story.topic, story.requests).unexplained.map((event) => event.offset),
    [2],
  );
});

attempts.run();

const uncertain = suite('staleAnswers: when an unacknowledged write took effect');

uncertain('accepts a 404 after an unacknowledged create that landed before but became readable only later', () => {
  const story = new Story();
  // Appended by the leader at 10 but acknowledged by no one: readable at some moment not known.
  const unknown = story.request({
    op: 'create',
    id: X,
    name: 'first',
    instance: 'A',
    sentMs: 0,
    answeredMs: 5000,
    status: 503,
  });
  story.land(unknown, 10);
  story.request({ op: 'delete', id: X, instance: 'C', sentMs: 5100, answeredMs: 5105, status: 404 });
  assert.equal(staleOf(story), []);
});

uncertain('flags it once an acknowledged write after it in the partition was answered before the request began', () => {
  const story = new Story();
  const unknown = story.request({
    op: 'create',
    id: X,
    name: 'first',
    instance: 'A',
    sentMs: 0,
    answeredMs: 5000,
    status: 503,
  });
  story.land(unknown, 10);
  story.write({ op: 'create', id: '43', name: 'other', sentMs: 5010, answeredMs: 5020, status: 200 });
  story.request({ op: 'delete', id: X, instance: 'C', sentMs: 5100, answeredMs: 5105, status: 404 });
  assert.equal(
    staleOf(story).map((p) => p.kind),
    ['stale'],
  );
});

uncertain.run();
