// Unavailability per fault and readiness against the writes, on histories written by hand.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { partitionOfKey } from '../../../src/log/kafka/key-partition.js';
import { availability } from './availability.js';
import { readinessProblems } from './readiness.js';
import { Story } from './story.js';

/** An id whose records go to `partition` of 3. */
function idIn(partition: number): string {
  for (let id = 1; ; id += 1) if (partitionOfKey(String(id), 3) === partition) return String(id);
}

const STUCK = idIn(0);
const HEALTHY = idIn(1);
const fault = { fault: 'pause', targets: ['node 1'], startMs: 0, endMs: 20_000, stuckPartitions: [0] };

/** A write answered `status` every second from `fromS` to `toS` (seconds) on `id`. */
function everySecond(story: Story, id: string, fromS: number, toS: number, status: number): void {
  for (let s = fromS; s <= toS; s += 1)
    story.request({ op: 'create', id, name: `${id}`, sentMs: s * 1000, answeredMs: s * 1000 + 100, status });
}

const measured = suite('availability');

measured(
  'measures the longest stretch without an acknowledged write, for healthy-led and stuck partitions apart',
  () => {
    const story = new Story();
    everySecond(story, HEALTHY, 0, 2, 200);
    everySecond(story, HEALTHY, 3, 6, 503);
    everySecond(story, HEALTHY, 7, 25, 200);
    everySecond(story, STUCK, 0, 19, 503);
    everySecond(story, STUCK, 20, 25, 200);
    const result = availability(fault, 26_000, story.requests, 3);
    assert.is(result.healthyGapMs, 5000);
    assert.is(result.stuckGapMs, 20_100);
    assert.is(result.recoveryMs, 19_100);
  },
);

measured(
  'counts the writes to healthy-led partitions sent from 8 s after the fault and answered before its repair',
  () => {
    const story = new Story();
    everySecond(story, HEALTHY, 0, 9, 503);
    everySecond(story, HEALTHY, 10, 25, 200);
    story.request({
      op: 'create',
      id: HEALTHY,
      name: 'rescued by the repair',
      sentMs: 18_000,
      answeredMs: 20_500,
      status: 200,
    });
    assert.equal(availability(fault, 26_000, story.requests, 3).settled, { acknowledged: 10, failed: 2 });
  },
);

measured('reports the slowest answer on a stuck partition and the writes that got none', () => {
  const story = new Story();
  story.request({ op: 'delete', id: STUCK, sentMs: 1000, answeredMs: 6200, status: 503 });
  story.request({ op: 'delete', id: STUCK, sentMs: 2000, answeredMs: 22_000, status: 0 });
  const result = availability(fault, 26_000, story.requests, 3);
  assert.is(result.stuckSlowestAnswerMs, 20_000);
  assert.is(result.stuckUnanswered, 1);
});

measured.run();

const ready = suite('readinessProblems');

ready('reports /readyz 200 more than 3 s (and slack) into a run of writes none of which was acknowledged', () => {
  const story = new Story();
  everySecond(story, HEALTHY, 0, 10, 503);
  everySecond(story, HEALTHY, 11, 12, 200);
  for (let s = 0; s <= 12; s += 1) story.poll('A', s * 1000 + 500, 200);
  const [problem, ...more] = readinessProblems(story.requests, story.polls, 13_000);
  assert.is(more.length, 0);
  assert.is(problem?.kind, 'ready while no write succeeds');
  assert.is(problem?.fromMs, 4500);
  assert.is(problem?.toMs, 10_500);
});

ready('reports /readyz 503 more than 5 s (and slack) after writes are acknowledged again', () => {
  const story = new Story();
  everySecond(story, HEALTHY, 0, 12, 200);
  for (let s = 0; s <= 12; s += 1) story.poll('A', s * 1000 + 500, 503);
  const [problem] = readinessProblems(story.requests, story.polls, 13_000);
  assert.is(problem?.kind, 'not ready while writes succeed');
  assert.is(problem?.fromMs, 6500);
});

ready('accepts an instance that turns 503 during its failures and 200 after them', () => {
  const story = new Story();
  everySecond(story, HEALTHY, 0, 5, 503);
  everySecond(story, HEALTHY, 6, 20, 200);
  for (let s = 0; s <= 20; s += 1) story.poll('A', s * 1000 + 500, s >= 2 && s <= 7 ? 503 : 200);
  assert.equal(readinessProblems(story.requests, story.polls, 21_000), []);
});

ready('ends a run of failures with no later write at its last answer (nothing is known after it)', () => {
  const story = new Story();
  story.request({ op: 'delete', id: HEALTHY, sentMs: 0, answeredMs: 5000, status: 503 });
  for (let s = 0; s <= 20; s += 1) story.poll('A', s * 1000 + 500, 200);
  const problems = readinessProblems(story.requests, story.polls, 21_000);
  assert.equal(
    problems.map((p) => p.polls),
    [1],
  );
});

ready('allows 503 during a stall of 2 s or more that ends in acknowledgements, and not before 2 s', () => {
  const story = new Story();
  everySecond(story, HEALTHY, 0, 9, 200);
  // From 10 s every write waits until 13.5 s, then all are acknowledged.
  for (let ms = 10_000; ms < 13_500; ms += 250)
    story.request({ op: 'create', id: HEALTHY, name: `${ms}`, sentMs: ms, answeredMs: 13_500, status: 200 });
  everySecond(story, HEALTHY, 14, 20, 200);
  for (let ms = 12_000; ms <= 13_400; ms += 200) story.poll('A', ms, ms >= 13_000 ? 503 : 200);
  assert.equal(readinessProblems(story.requests, story.polls, 21_000), []);
  const early = new Story();
  for (const request of story.requests) early.request(request);
  early.poll('A', 11_900, 503);
  assert.equal(
    readinessProblems(early.requests, early.polls, 21_000).map((p) => p.kind),
    ['not ready while writes succeed'],
  );
});

ready(
  'a stall does not end with an acknowledgement that wrote nothing (an identical retry), when the history says so',
  () => {
    const story = new Story();
    everySecond(story, HEALTHY, 0, 9, 200);
    story.request({ op: 'create', id: STUCK, name: 'stuck', sentMs: 10_000, answeredMs: 15_000, status: 200 });
    // Answered 200 from the read model: the report was there with that name. Its seq is not among those that landed.
    story.request({ op: 'create', id: HEALTHY, name: 'again', sentMs: 12_000, answeredMs: 12_010, status: 200 });
    story.poll('A', 12_500, 503);
    const wrote = new Set(story.requests.filter((r) => r.sentMs !== 12_000).map((r) => r.seq));
    assert.equal(readinessProblems(story.requests, story.polls, 21_000, wrote, true), []);
    // Had it written, the stall was over: the 503 is wrong.
    const all = new Set(story.requests.map((r) => r.seq));
    assert.equal(
      readinessProblems(story.requests, story.polls, 21_000, all, true).map((p) => p.kind),
      ['not ready while writes succeed'],
    );
  },
);

ready('a stall ends for readiness when a write sent after it is acknowledged, though older writes still wait', () => {
  const story = new Story();
  everySecond(story, HEALTHY, 0, 9, 200);
  story.request({ op: 'create', id: STUCK, name: 'stuck', sentMs: 10_000, answeredMs: 15_000, status: 200 });
  everySecond(story, HEALTHY, 11, 20, 200);
  story.poll('A', 14_000, 503);
  assert.equal(
    readinessProblems(story.requests, story.polls, 21_000).map((p) => p.kind),
    ['not ready while writes succeed'],
  );
});

ready('ignores writes the instance never answered (it was down)', () => {
  const story = new Story();
  story.request({ op: 'delete', id: HEALTHY, sentMs: 0, answeredMs: 5, status: 0 });
  story.request({ op: 'delete', id: HEALTHY, sentMs: 6000, answeredMs: 6010, status: 204 });
  for (let s = 0; s <= 6; s += 1) story.poll('A', s * 1000 + 500, s < 4 ? 0 : 200);
  assert.equal(readinessProblems(story.requests, story.polls, 7000), []);
});

ready('does not carry writes acknowledged before an instance went down over to the process that replaces it', () => {
  const story = new Story();
  everySecond(story, HEALTHY, 0, 4, 200);
  // Killed at 5 s: unanswered until its restart at 7 s, then catching up (503) until 14 s, before any write of its own.
  story.request({ op: 'create', id: HEALTHY, name: 'down', sentMs: 5500, answeredMs: 5505, status: 0 });
  for (let s = 5; s <= 14; s += 1) story.poll('A', s * 1000 + 500, s < 7 ? 0 : 503);
  everySecond(story, HEALTHY, 15, 20, 200);
  for (let s = 15; s <= 20; s += 1) story.poll('A', s * 1000 + 500, 200);
  assert.equal(readinessProblems(story.requests, story.polls, 21_000), []);
  // Without the restart (every poll answered), the same 503s are wrong 6 s after the first acknowledgement on.
  const up = new Story();
  everySecond(up, HEALTHY, 0, 4, 200);
  for (let s = 5; s <= 14; s += 1) up.poll('A', s * 1000 + 500, 503);
  assert.equal(
    readinessProblems(up.requests, up.polls, 21_000).map((p) => [p.kind, p.fromMs]),
    [['not ready while writes succeed', 6500]],
  );
});

ready.run();
