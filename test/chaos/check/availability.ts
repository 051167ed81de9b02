// (f) Unavailability per fault, from the requests alone: the longest stretch without an
// acknowledged write, for the partitions the fault left alone (their leader was healthy) and for
// those whose leader it hit; the time from the fault's start to the last failed write; the share
// of writes to healthy-led partitions acknowledged from 8 s after the start (issue 17 item 2's
// target; only writes answered before the repair: one the repair rescued says nothing of the
// fault); and how long the stuck partitions' writes took to be answered.
import { partitionOfKey } from '../../../src/log/kafka/key-partition.js';
import { acknowledged, unknownOutcome, type FaultWindow, type RequestRecord } from '../history.js';

/** From this long after a fault's start, healthy-led partitions must take writes again (issue 17). */
export const SETTLE_AFTER_FAULT_MS = 8000;

export interface FaultAvailability {
  readonly fault: string;
  readonly targets: readonly string[];
  readonly durationMs: number;
  readonly healthyGapMs: number | undefined;
  readonly stuckGapMs: number | undefined;
  /** From the fault's start to the answer of the last failed write sent before the next fault (0: none failed). */
  readonly recoveryMs: number;
  /** Writes to healthy-led partitions sent from SETTLE_AFTER_FAULT_MS after the start and answered before the repair. */
  readonly settled: { readonly acknowledged: number; readonly failed: number };
  /** The slowest answer to a write on a stuck partition sent during the fault, and how many got none. */
  readonly stuckSlowestAnswerMs: number | undefined;
  readonly stuckUnanswered: number;
}

/** The longest stretch in [from, to] without an acknowledgement among `answers` (answer times). */
function longestGap(answers: readonly number[], from: number, to: number): number {
  const inside = answers.filter((at) => at > from && at <= to).sort((a, b) => a - b);
  if (inside.length === 0) return to - from;
  let longest = 0;
  let previous = from;
  for (const at of inside) {
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return longest;
}

/** The longest gap over `partitions` that had writes sent in [from, to] (one without any tells nothing). */
function gapOver(
  partitions: readonly number[],
  writes: readonly { partition: number; request: RequestRecord }[],
  from: number,
  to: number,
): number | undefined {
  const written = partitions.filter((partition) =>
    writes.some((w) => w.partition === partition && w.request.sentMs >= from && w.request.sentMs <= to),
  );
  if (written.length === 0) return undefined;
  const gaps = written.map((partition) =>
    longestGap(
      writes.filter((w) => w.partition === partition && acknowledged(w.request)).map((w) => w.request.answeredMs),
      from,
      to,
    ),
  );
  return gaps.reduce((a, b) => Math.max(a, b), 0);
}

export function availability(
  window: FaultWindow,
  until: number,
  requests: readonly RequestRecord[],
  partitions: number,
): FaultAvailability {
  const writes = requests.map((request) => ({ partition: partitionOfKey(request.id, partitions), request }));
  const all = Array.from({ length: partitions }, (_, p) => p);
  const healthy = all.filter((p) => !window.stuckPartitions.includes(p));
  const during = writes.filter(({ request }) => request.sentMs >= window.startMs && request.sentMs < until);
  const lastFailure = during
    .filter(({ request }) => unknownOutcome(request))
    .reduce((latest, { request }) => Math.max(latest, request.answeredMs), window.startMs);
  const late = during.filter(
    ({ partition, request }) =>
      healthy.includes(partition) &&
      request.sentMs >= window.startMs + SETTLE_AFTER_FAULT_MS &&
      request.answeredMs <= window.endMs,
  );
  const stuck = during.filter(
    ({ partition, request }) => window.stuckPartitions.includes(partition) && request.sentMs <= window.endMs,
  );
  return {
    fault: window.fault,
    targets: window.targets,
    durationMs: window.endMs - window.startMs,
    healthyGapMs: gapOver(healthy, writes, window.startMs, until),
    stuckGapMs: gapOver(window.stuckPartitions, writes, window.startMs, until),
    recoveryMs: lastFailure - window.startMs,
    settled: {
      acknowledged: late.filter(({ request }) => acknowledged(request)).length,
      failed: late.filter(({ request }) => unknownOutcome(request)).length,
    },
    stuckSlowestAnswerMs:
      stuck.length === 0
        ? undefined
        : stuck.reduce((slowest, { request }) => Math.max(slowest, request.answeredMs - request.sentMs), 0),
    stuckUnanswered: stuck.filter(({ request }) => request.status === 0).length,
  };
}

/** Every fault of a run, each measured until the next one starts (the last until the run ends). */
export function availabilityPerFault(
  faults: readonly FaultWindow[],
  endMs: number,
  requests: readonly RequestRecord[],
  partitions: number,
): FaultAvailability[] {
  return faults.map((window, index) => availability(window, faults[index + 1]?.startMs ?? endMs, requests, partitions));
}
