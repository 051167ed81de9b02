// The whole verdict on a run: digests and positions against the fresh fold.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { finalName, judge } from './verdict.js';
import { Story } from './story.js';

const verdict = suite('judge');

function created(): Story {
  const story = new Story();
  story.write({ op: 'create', id: '1', name: 'one', sentMs: 0, answeredMs: 10, status: 200 });
  return story;
}

verdict('finds nothing wrong when every instance, replay and the fresh fold agree', () => {
  const result = judge(created().history());
  assert.equal([result.lost, result.contradictions, result.digests.problems], [[], [], []]);
  assert.is(result.acknowledged, 1);
});

verdict('reports an instance whose digest differs from the fresh fold, and one that stopped short of the end', () => {
  const story = created();
  const history = story.history();
  const result = judge({ ...history, stops: [{ instance: 'B', position: '0:0', digest: 'f00d' }] });
  assert.is(result.digests.problems.length, 2);
});

verdict('reports a replay digest that differs from the fresh fold', () => {
  const result = judge({ ...created().history(), replayDigest: 'f00d' });
  assert.is(result.digests.problems.length, 1);
});

verdict('names a live report whose create no longer opens, and not a deleted one whose create does not either', () => {
  const story = created();
  story.write({ op: 'create', id: '2', name: 'two', sentMs: 20, answeredMs: 30, status: 200 });
  story.write({ op: 'delete', id: '2', sentMs: 40, answeredMs: 50, status: 204 });
  const history = story.history();
  const createOf = (id: string) =>
    history.topic.find(
      (record) =>
        record.value.toString().includes('"ReportCreated"') && record.value.toString().includes(`"id":"${id}"`),
    );
  const positions = ['1', '2'].map((id) => createOf(id)).map((record) => `${record?.partition}:${record?.offset}`);
  const result = judge({ ...history, unopened: positions });
  assert.is(result.digests.problems.length, 1);
  assert.match(
    result.digests.problems[0] ?? '',
    new RegExp(`^report 1 is live, but its create at ${positions[0]} no longer opens`),
  );
});

/** A's write stuck from 0 to its 503 at 5 s; meanwhile A loses a race a second (B's create lands first), /readyz 200 throughout. */
function racesLostBesideAStuckWrite(landed: boolean): Story {
  const story = new Story();
  story.request({ op: 'create', id: '999', name: 'stuck', instance: 'A', sentMs: 0, answeredMs: 5000, status: 503 });
  for (let s = 1; s <= 12; s += 1) {
    const id = String(100 + s);
    story.write({
      op: 'create',
      id,
      name: `${id} via B`,
      instance: 'B',
      purpose: 'race',
      sentMs: s * 1000,
      answeredMs: s * 1000 + 50,
      status: 200,
    });
    const lost = story.request({
      op: 'create',
      id,
      name: `${id} via A`,
      instance: 'A',
      purpose: 'race',
      sentMs: s * 1000,
      answeredMs: s * 1000 + 100,
      status: 409,
    });
    if (landed) story.land(lost, s * 1000 + 80);
  }
  for (let s = 0; s <= 12; s += 1) story.poll('A', s * 1000 + 500, 200);
  return story;
}

verdict('counts a write answered 409 after its event landed as one that went through the log, for readiness', () => {
  assert.equal(judge(racesLostBesideAStuckWrite(true).history()).readiness, []);
});

verdict('still reports /readyz 200 while the only answers are 409s decided without writing', () => {
  assert.equal(
    judge(racesLostBesideAStuckWrite(false).history()).readiness.map((problem) => [problem.instance, problem.kind]),
    [['A', 'ready while no write succeeds']],
  );
});

verdict.run();

const final = suite('finalName');

final('gives the name of the last effective create, or undefined after an effective delete', () => {
  const story = created();
  assert.is(finalName(judge(story.history()).folded, '1'), 'one');
  story.write({ op: 'delete', id: '1', sentMs: 20, answeredMs: 30, status: 204 });
  assert.is(finalName(judge(story.history()).folded, '1'), undefined);
});

final.run();
