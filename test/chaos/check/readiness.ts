// Readiness against what an instance could actually do (issue 17 item 3): while none of its
// writes is acknowledged, /readyz must say 503 from NOT_READY_WITHIN_MS on; once writes are
// acknowledged again, 200 from READY_WITHIN_MS on. An instance's "blackout" is a run of its writes
// (in the order sent) none of which was acknowledged, up to the next one that was. Writes the
// instance never answered (it was killed) say nothing about what its /readyz should have said.
// A stall is not "writes succeed": while a write has waited STALL_MS (2 s) and no write sent
// after it was acknowledged, 503 is allowed (not required: it may still succeed), even if those
// writes succeed later. Without this the two rules contradicted each other: a failover that held
// every write for 3.4 s before all of them succeeded demanded 200 throughout, while the same stall
// ending in time-outs demanded 503 from 3 s on, and the instance cannot know before which it is
// (it says 503 from 2.5 s of waiting, to be in time for the second on a loaded machine).
// A write "goes through" when it is acknowledged, or when it was answered 409 or 404 after its
// event had landed in the topic: the log took the instance's write and the fold decided against it
// (a race another instance won). The service counts such a write as confirmed, rightly: its writes
// reach the log. Counting only 200/204 here reported "ready while no write succeeds" while an
// instance's racing creates were being appended and applied beside one stuck partition.
import { acknowledged, unknownOutcome, type ReadinessPoll, type RequestRecord } from '../history.js';

export const NOT_READY_WITHIN_MS = 3000;
/** A write waiting this long with none sent after it acknowledged is a stall: 503 is allowed then (not required). */
export const STALL_MS = 2000;
export const READY_WITHIN_MS = 5000;
/** For the poll interval and a loaded machine. */
export const READINESS_SLACK_MS = 1000;

export interface ReadinessProblem {
  readonly instance: string;
  readonly kind: 'ready while no write succeeds' | 'not ready while writes succeed';
  readonly fromMs: number;
  readonly toMs: number;
  /** Polls that answered wrongly in that stretch. */
  readonly polls: number;
  /** What the wrong 503s said, each once. */
  readonly reasons: readonly string[];
}

interface Stretch {
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * Runs of unacknowledged writes: from the first one's sending to the sending of the next
 * acknowledged write, or, when none followed, to the last failure's answer (nothing is known after).
 */
function blackouts(writes: readonly RequestRecord[], through: (write: RequestRecord) => boolean): Stretch[] {
  const stretches: Stretch[] = [];
  let run: { fromMs: number; lastAnswerMs: number } | undefined;
  for (const write of writes) {
    if (unknownOutcome(write))
      run = { fromMs: run?.fromMs ?? write.sentMs, lastAnswerMs: Math.max(run?.lastAnswerMs ?? 0, write.answeredMs) };
    else if (through(write) && run !== undefined) {
      stretches.push({ fromMs: run.fromMs, toMs: write.sentMs });
      run = undefined;
    }
  }
  if (run !== undefined) stretches.push({ fromMs: run.fromMs, toMs: run.lastAnswerMs });
  return stretches;
}

/**
 * From each acknowledgement to the sending of the next write that was not acknowledged, or of the
 * next request or poll the instance did not answer at all: it was down then, and what its previous
 * process acknowledged says nothing about the one that starts next (which must catch up first).
 */
function writing(
  writes: readonly RequestRecord[],
  through: (write: RequestRecord) => boolean,
  unansweredMs: readonly number[],
  endMs: number,
): Stretch[] {
  const stretches: Stretch[] = [];
  const downs = [...unansweredMs].sort((a, b) => a - b);
  const nextDown = (atMs: number) => downs.find((ms) => ms > atMs) ?? endMs;
  let nextFailureMs = endMs;
  for (const write of [...writes].reverse()) {
    if (unknownOutcome(write)) nextFailureMs = write.sentMs;
    else if (through(write))
      stretches.push({ fromMs: write.answeredMs, toMs: Math.min(nextFailureMs, nextDown(write.answeredMs)) });
  }
  return stretches;
}

/** The stretches less their first `graceMs`, overlapping ones merged. */
function judged(stretches: readonly Stretch[], graceMs: number): Stretch[] {
  const windows = stretches
    .map(({ fromMs, toMs }) => ({ fromMs: fromMs + graceMs, toMs }))
    .filter(({ fromMs, toMs }) => fromMs < toMs)
    .sort((a, b) => a.fromMs - b.fromMs);
  const merged: Stretch[] = [];
  for (const window of windows) {
    const last = merged[merged.length - 1];
    if (last !== undefined && window.fromMs <= last.toMs)
      merged[merged.length - 1] = { fromMs: last.fromMs, toMs: Math.max(last.toMs, window.toMs) };
    else merged.push(window);
  }
  return merged;
}

function wrongPolls(
  instance: string,
  kind: ReadinessProblem['kind'],
  windows: readonly Stretch[],
  polls: readonly ReadinessPoll[],
  wrong: number,
): ReadinessProblem[] {
  return windows.flatMap(({ fromMs, toMs }) => {
    const bad = polls.filter((poll) => poll.status === wrong && poll.sentMs >= fromMs && poll.sentMs < toMs);
    const [first] = bad;
    const last = bad[bad.length - 1];
    const reasons = [...new Set(bad.flatMap((poll) => (poll.reason === undefined ? [] : [poll.reason])))];
    return first === undefined || last === undefined
      ? []
      : [{ instance, kind, fromMs: first.sentMs, toMs: last.sentMs, polls: bad.length, reasons }];
  });
}

/** Whether at `atMs` a write (in send order) had waited STALL_MS with none sent after it acknowledged yet. */
function stalled(writes: readonly RequestRecord[], through: (write: RequestRecord) => boolean, atMs: number): boolean {
  let oldestWaiting: number | undefined;
  for (const write of writes) {
    if (write.sentMs > atMs) break;
    const waiting = write.answeredMs > atMs;
    if (waiting && oldestWaiting === undefined) oldestWaiting = write.sentMs;
    // An acknowledgement in hand at atMs of a write sent after the oldest waiting one: writes get through.
    else if (!waiting && through(write) && oldestWaiting !== undefined) oldestWaiting = undefined;
  }
  return oldestWaiting !== undefined && atMs - oldestWaiting >= STALL_MS;
}

/**
 * `landedBeforeAnswer`: the requests (by seq) whose event had landed in the topic by their answer
 * (verdict.ts finds them in the fold); they went through the log. `wroteKnown`: whether that set
 * holds every such request (acknowledged ones too), so an acknowledgement without an event of its
 * own (an identical retry's 200, a 404 that wrote nothing) can be told apart.
 */
export function readinessProblems(
  requests: readonly RequestRecord[],
  polls: readonly ReadinessPoll[],
  endMs: number,
  landedBeforeAnswer: ReadonlySet<number> = new Set(),
  wroteKnown = false,
): ReadinessProblem[] {
  const landed = (write: RequestRecord) => landedBeforeAnswer.has(write.seq);
  const through = (write: RequestRecord) =>
    acknowledged(write) || ((write.status === 409 || write.status === 404) && landed(write));
  // A stall ends with a write that reached the log, as the service sees it (write-outcomes.ts): an
  // answer that wrote nothing says nothing of the log, though the client got its 200.
  const wrote = (write: RequestRecord) => through(write) && (!wroteKnown || landed(write));
  const instances = [...new Set(polls.map((poll) => poll.instance))];
  return instances.flatMap((instance) => {
    const sent = requests.filter((request) => request.instance === instance);
    const writes = sent.filter((request) => request.status !== 0).sort((a, b) => a.sentMs - b.sentMs);
    const own = polls.filter((poll) => poll.instance === instance);
    const unansweredMs = [
      ...sent.filter((request) => request.status === 0),
      ...own.filter((poll) => poll.status === 0),
    ].map((unanswered) => unanswered.sentMs);
    const notStalled = own.filter((poll) => poll.status !== 503 || !stalled(writes, wrote, poll.sentMs));
    return [
      ...wrongPolls(
        instance,
        'ready while no write succeeds',
        judged(blackouts(writes, through), NOT_READY_WITHIN_MS + READINESS_SLACK_MS),
        own,
        200,
      ),
      ...wrongPolls(
        instance,
        'not ready while writes succeed',
        judged(writing(writes, through, unansweredMs, endMs), READY_WITHIN_MS + READINESS_SLACK_MS),
        notStalled,
        503,
      ),
    ];
  });
}
