// The checks on acknowledged writes, on histories written by hand.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { foldTopic } from './fold-topic.js';
import { Story } from './story.js';
import { answersAgainstFold, oneBodyPerIncarnation, realTimeOrder } from './writes.js';

const X = '42';

const answers = suite('answersAgainstFold');

answers('counts an acknowledged create with no event in the topic as lost', () => {
  const story = new Story();
  story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 200 });
  const problems = answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000);
  assert.equal(
    problems.map((p) => p.kind),
    ['lost'],
  );
});

answers('counts an acknowledged delete whose event is void in the fold as lost', () => {
  const story = new Story();
  story.write({ op: 'delete', id: X, sentMs: 0, answeredMs: 10, status: 204 });
  const problems = answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000);
  assert.equal(
    problems.map((p) => p.kind),
    ['lost'],
  );
});

answers('accepts a 200 that wrote nothing when an earlier create put that very body in place', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 5000, status: 503 });
  story.request({ op: 'create', id: X, name: 'a', sentMs: 5020, answeredMs: 5030, status: 200 });
  assert.equal(answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000), []);
});

answers(
  'accepts a 200 whose own event is void because its earlier, unacknowledged attempt landed first (an identical retry)',
  () => {
    const story = new Story();
    story.write({ op: 'create', id: X, name: 'a', instance: 'A', sentMs: 0, answeredMs: 5000, status: 503 });
    story.write({ op: 'create', id: X, name: 'a', instance: 'B', sentMs: 5100, answeredMs: 5110, status: 200 });
    assert.equal(answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000), []);
  },
);

answers('counts a 200 whose event is void with another name in place as lost', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 5000, status: 503 });
  story.write({ op: 'create', id: X, name: 'b', sentMs: 5100, answeredMs: 5110, status: 200 });
  const problems = answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000);
  assert.equal(
    problems.map((p) => p.kind),
    ['lost'],
  );
});

answers('counts a 409 whose event took effect as misanswered', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 409 });
  const problems = answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000);
  assert.equal(
    problems.map((p) => p.kind),
    ['misanswered'],
  );
});

answers('accepts a 409 whose event is void (another instance created the id first)', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'a', instance: 'A', sentMs: 0, answeredMs: 10, status: 200 });
  story.write({ op: 'create', id: X, name: 'b', instance: 'B', sentMs: 0, answeredMs: 12, status: 409 });
  assert.equal(answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000), []);
});

answers(
  'counts a 503 answered before the time-out ran out for a write already committed as misanswered (issue 17 item 4)',
  () => {
    const story = new Story();
    const write = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 900, status: 503 });
    story.land(write, 850);
    const problems = answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000);
    assert.equal(
      problems.map((p) => p.kind),
      ['misanswered'],
    );
  },
);

answers(
  'accepts a 503 for a write whose event landed void (decided again, it could not be answered in time): nothing took effect',
  () => {
    const story = new Story();
    story.write({ op: 'create', id: X, name: 'a', instance: 'A', sentMs: 0, answeredMs: 10, status: 200 });
    const voided = story.request({
      op: 'create',
      id: X,
      name: 'b',
      instance: 'B',
      sentMs: 0,
      answeredMs: 900,
      status: 503,
    });
    story.land(voided, 20);
    assert.equal(answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000), []);
  },
);

answers(
  'accepts a 503 given at the time-out for a write that landed just before it (the projection wait ran out)',
  () => {
    const story = new Story();
    const write = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 5001, status: 503 });
    story.land(write, 4990);
    assert.equal(answersAgainstFold(story.requests, foldTopic(story.topic, story.requests), 5000), []);
  },
);

answers.run();

const order = suite('realTimeOrder');

order('reports acknowledged writes that did not overlap in time but lie in the other order', () => {
  const story = new Story();
  const first = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 10, status: 200 });
  const second = story.request({ op: 'delete', id: X, sentMs: 20, answeredMs: 30, status: 204 });
  story.land(second, 30).land(first, 31);
  assert.equal(
    realTimeOrder(story.requests, foldTopic(story.topic, story.requests)).map((p) => p.kind),
    ['reordered'],
  );
});

order('accepts overlapping acknowledged writes in either order', () => {
  const story = new Story();
  const first = story.request({ op: 'create', id: X, name: 'a', sentMs: 0, answeredMs: 25, status: 200 });
  const second = story.request({ op: 'delete', id: X, sentMs: 20, answeredMs: 30, status: 204 });
  story.land(second, 22).land(first, 23);
  assert.equal(realTimeOrder(story.requests, foldTopic(story.topic, story.requests)), []);
});

order.run();

const bodies = suite('oneBodyPerIncarnation');

bodies('reports a racing id answered 200 for two different bodies', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'via A', purpose: 'race', sentMs: 0, answeredMs: 10, status: 200 });
  story.request({
    op: 'create',
    id: X,
    name: 'via B',
    instance: 'B',
    purpose: 'race',
    sentMs: 0,
    answeredMs: 10,
    status: 200,
  });
  assert.equal(
    oneBodyPerIncarnation(story.requests, foldTopic(story.topic, story.requests)).map((p) => p.kind),
    ['two-bodies'],
  );
});

bodies('accepts different bodies in different incarnations, across an effective delete', () => {
  const story = new Story();
  story.write({ op: 'create', id: X, name: 'v1', sentMs: 0, answeredMs: 10, status: 200 });
  story.write({ op: 'delete', id: X, sentMs: 20, answeredMs: 30, status: 204 });
  story.write({ op: 'create', id: X, name: 'v2', sentMs: 40, answeredMs: 50, status: 200 });
  assert.equal(oneBodyPerIncarnation(story.requests, foldTopic(story.topic, story.requests)), []);
});

bodies.run();
