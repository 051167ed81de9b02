// (e) Real-time order of every answer, as Jepsen's Knossos checks a register for linearizability,
// with the topic as the register's history. An operation on a report takes effect at one moment
// between its request's sending and its answer, so its answer must be true of the report at some
// moment of that interval:
//   create 200 "N": the report is "N"; create 409 "N": the report exists with another name;
//   delete 204: the report exists (and its own event ends it: checked by (a)); delete 404: absent.
// When each effective event took effect is known only within bounds: not before it landed (the
// brokers' LogAppendTime, on this machine's clock), and no later than the answer of an acknowledged
// write at or after it in its partition (a partition becomes readable in offset order, and an
// acknowledged write is readable by its answer). A write answered 503 may be appended and become
// readable only seconds later, when its replicas are back. So the report during [sent, answered] is
// any of the states from the last event certainly in effect at `sent` to the last one possibly in
// effect at `answered`, and the answer must be true of one of them. A stale answer (decided on a
// state older than the request: another instance had not folded a write answered before the
// request began) is true of none. Unknown outcomes (503, no answer) claim nothing.
import { acknowledged, settled, type RequestRecord } from '../history.js';
import type { FoldedEvent, FoldedTopic } from './fold-topic.js';
import type { WriteProblem } from './writes.js';

/** One change of a report: what it is after, and when that can have taken effect. */
interface Change {
  readonly landedMs: number;
  /** By then it had certainly taken effect (infinite when no acknowledged answer bounds it). */
  readonly effectiveByMs: number;
  readonly name: string | undefined;
}

/** Per event, the earliest answer of an acknowledged write at or after it in its partition. */
function effectiveBy(folded: FoldedTopic): Map<FoldedEvent, number> {
  const bound = new Map<FoldedEvent, number>();
  const byPartition = new Map<number, FoldedEvent[]>();
  for (const event of folded.events)
    byPartition.set(event.partition, [...(byPartition.get(event.partition) ?? []), event]);
  for (const events of byPartition.values()) {
    let earliest = Number.POSITIVE_INFINITY;
    for (const event of [...events].reverse()) {
      const { request } = event;
      if (request !== undefined && acknowledged(request) && folded.byRequest.get(request.seq) === event)
        earliest = Math.min(earliest, request.answeredMs);
      bound.set(event, earliest);
    }
  }
  return bound;
}

/** Whether `request`'s answer is true of a report named `name` (undefined: absent). */
function trueOf(request: RequestRecord, name: string | undefined): boolean {
  if (request.op === 'delete') return request.status === 204 ? name !== undefined : name === undefined;
  return request.status === 200 ? name === request.name : name !== undefined && name !== request.name;
}

function describe(request: RequestRecord): string {
  return `#${request.seq} ${request.op} ${request.id}${request.name === undefined ? '' : ` "${request.name}"`} via ${request.instance} -> ${request.status}`;
}

const stateName = (name: string | undefined) => (name === undefined ? 'absent' : `"${name}"`);

/** Answers true of no state the report can have been in between their request's sending and their answer. */
export function staleAnswers(requests: readonly RequestRecord[], folded: FoldedTopic): WriteProblem[] {
  const bounds = effectiveBy(folded);
  const changes = new Map<string, Change[]>();
  for (const [id, events] of folded.byId) {
    changes.set(
      id,
      events
        .filter((event) => event.effective)
        .map((event) => ({
          landedMs: event.landedMs,
          effectiveByMs: bounds.get(event) ?? Number.POSITIVE_INFINITY,
          name: event.nameAfter,
        })),
    );
  }
  const problems: WriteProblem[] = [];
  for (const request of requests) {
    if (!settled(request)) continue;
    const ofId = changes.get(request.id) ?? [];
    // States 0 (absent, before any event) .. ofId.length; the changes take effect in log order.
    const first = ofId.filter((change) => change.effectiveByMs <= request.sentMs).length;
    const last = ofId.filter((change) => change.landedMs <= request.answeredMs).length;
    const states = Array.from({ length: Math.max(0, last - first) + 1 }, (_, k) =>
      first + k === 0 ? undefined : ofId[first + k - 1]?.name,
    );
    if (states.some((name) => trueOf(request, name))) continue;
    problems.push({
      kind: 'stale',
      id: request.id,
      detail: `${describe(request)} (sent at ${request.sentMs}, answered ${request.answeredMs - request.sentMs} ms later), while the report was ${states.map(stateName).join(' or ')}`,
    });
  }
  return problems;
}
