// A head read is believed only once enough of the partition's other replicas name the broker it came
// from as the leader: an isolated old leader, which still names itself, is refused, and its word
// alone refuses no one.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { confirmLeader, DeposedLeaderError } from '../../../src/log/kafka/leader-confirmation.js';

const test = suite('confirming the leader a head was read from');

/** Each replica's answer: the leader it names, or an error; `never` holds forever (a paused broker). */
type Answer = number | Error | 'never';

function confirm(
  leader: number,
  replicas: number[],
  answers: Record<number, Answer>,
  minInsyncReplicas = 2,
): Promise<string> {
  const asked: number[] = [];
  return confirmLeader({
    partition: 0,
    leader,
    replicas,
    minInsyncReplicas,
    leaderNamedBy: (replica) => {
      asked.push(replica);
      const answer = answers[replica];
      if (answer === 'never') return new Promise<number>(() => undefined);
      if (answer instanceof Error) return Promise.reject(answer);
      return Promise.resolve(answer ?? -1);
    },
  }).then(
    () => `confirmed (asked ${asked.join(',')})`,
    (error: unknown) =>
      error instanceof DeposedLeaderError ? `deposed: ${error.named} named` : `failed: ${(error as Error).message}`,
  );
}

test('one other replica naming the same leader is enough with 3 replicas and min.insync.replicas 2, even while the third is paused', async () => {
  assert.is(await confirm(1, [1, 2, 3], { 2: 1, 3: 'never' }), 'confirmed (asked 2,3)');
});

test('an isolated old leader is refused once the other replicas name the new one', async () => {
  assert.is(await confirm(3, [1, 2, 3], { 1: 2, 2: 2 }), 'deposed: 2 named');
});

test('an old leader back from isolation that still names itself does not refuse the new leader', async () => {
  assert.is(await confirm(2, [1, 2, 3], { 3: 3, 1: 2 }), 'confirmed (asked 1,3)');
});

test('refused when too few replicas answer to confirm', async () => {
  assert.match(
    await confirm(1, [1, 2, 3], { 2: new Error('connection refused'), 3: new Error('connection refused') }),
    /^failed: too few replicas of partition 0 answered/,
  );
});

test('with min.insync.replicas 1 every other replica must agree', async () => {
  assert.is(await confirm(1, [1, 2, 3], { 2: 1, 3: 2 }, 1), 'deposed: 2 named');
  assert.is(await confirm(1, [1, 2, 3], { 2: 1, 3: 1 }, 1), 'confirmed (asked 2,3)');
});

test('a partition with one replica has no one to ask', async () => {
  assert.is(await confirm(1, [1], {}), 'confirmed (asked )');
});

test.run();
