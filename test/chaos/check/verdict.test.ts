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

verdict.run();

const final = suite('finalName');

final('gives the name of the last effective create, or undefined after an effective delete', () => {
  const story = created();
  assert.is(finalName(judge(story.history()).folded, '1'), 'one');
  story.write({ op: 'delete', id: '1', sentMs: 20, answeredMs: 30, status: 204 });
  assert.is(finalName(judge(story.history()).folded, '1'), undefined);
});

final.run();
