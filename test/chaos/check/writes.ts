// Checks on acknowledged writes that hold whatever rule the fold implements:
// (a) every acknowledged write is in the topic and holds right after its event (and every 409/404 that wrote did
//     not: the answer matches the history); a 200 that wrote nothing found its report in place;
//     a write answered 503 before its time-out ran out was not committed by then (issue 17 item 4);
// (b) acknowledged writes to one id that did not overlap in time are in that order in the partition;
// (c) no two 200s for different bodies within one incarnation of an id (racing ids, never deleted,
//     have one incarnation).
import { acknowledged, type RequestRecord } from '../history.js';
import { holds, type FoldedEvent, type FoldedTopic } from './fold-topic.js';

export interface WriteProblem {
  readonly kind: 'lost' | 'misanswered' | 'reordered' | 'two-bodies' | 'stale';
  readonly id: string;
  readonly detail: string;
}

function describe(request: RequestRecord): string {
  return `#${request.seq} ${request.op} ${request.id}${request.name === undefined ? '' : ` "${request.name}"`} via ${request.instance} -> ${request.status}`;
}

/** (a): what each answered write says against what its event did in the fold. */
export function answersAgainstFold(
  requests: readonly RequestRecord[],
  folded: FoldedTopic,
  writeTimeoutMs: number,
): WriteProblem[] {
  const problems: WriteProblem[] = [];
  for (const request of requests) {
    const event = folded.byRequest.get(request.seq);
    if (acknowledged(request)) {
      if (event === undefined && !(request.op === 'create' && foundInPlace(request, folded)))
        problems.push({ kind: 'lost', id: request.id, detail: `${describe(request)}: no event in the topic` });
      else if (event !== undefined && !holds(request, event))
        problems.push({
          kind: 'lost',
          id: request.id,
          detail: `${describe(request)}: after its event at ${event.partition}:${event.offset} the report is ${event.nameAfter === undefined ? 'absent' : `"${event.nameAfter}"`}`,
        });
    } else if ((request.status === 404 || request.status === 409) && event?.effective === true) {
      problems.push({
        kind: 'misanswered',
        id: request.id,
        detail: `${describe(request)}: its event at ${event.partition}:${event.offset} took effect`,
      });
    } else if (
      request.status === 503 &&
      event?.effective === true &&
      event.landedMs <= request.answeredMs &&
      request.answeredMs - request.sentMs < writeTimeoutMs
    ) {
      // Applied, and known so before the time-out ran out. A voided event's 503 is true: nothing took effect.
      const detail = `${describe(request)} after ${request.answeredMs - request.sentMs} ms (${request.message ?? ''}), but its event at ${event.partition}:${event.offset} had landed ${request.answeredMs - event.landedMs} ms before`;
      problems.push({ kind: 'misanswered', id: request.id, detail });
    }
  }
  return problems;
}

/** A 200 without a write (an identical retry): some effective create put that very body in place. */
function foundInPlace(request: RequestRecord, folded: FoldedTopic): boolean {
  return (folded.byId.get(request.id) ?? []).some(
    (event) =>
      event.effective &&
      event.type === 'ReportCreated' &&
      event.name === request.name &&
      (event.request?.sentMs ?? 0) <= request.answeredMs,
  );
}

/** (b): real-time order of acknowledged writes is log order. */
export function realTimeOrder(requests: readonly RequestRecord[], folded: FoldedTopic): WriteProblem[] {
  const byId = new Map<string, { request: RequestRecord; event: FoldedEvent }[]>();
  for (const request of requests) {
    const event = folded.byRequest.get(request.seq);
    if (!acknowledged(request) || event === undefined) continue;
    const writes = byId.get(request.id);
    if (writes === undefined) byId.set(request.id, [{ request, event }]);
    else writes.push({ request, event });
  }
  const problems: WriteProblem[] = [];
  for (const [id, writes] of byId) {
    for (const first of writes) {
      for (const second of writes) {
        if (first.request.answeredMs < second.request.sentMs && first.event.offset > second.event.offset) {
          problems.push({
            kind: 'reordered',
            id,
            detail: `${describe(first.request)} answered before ${describe(second.request)} was sent, but lies after it (${first.event.offset} > ${second.event.offset})`,
          });
        }
      }
    }
  }
  return problems;
}

/** (c): one body per incarnation among the 200s. */
export function oneBodyPerIncarnation(requests: readonly RequestRecord[], folded: FoldedTopic): WriteProblem[] {
  const bodies = new Map<string, Set<string>>();
  const note = (key: string, name: string) => bodies.set(key, (bodies.get(key) ?? new Set()).add(name));
  for (const request of requests) {
    if (request.op !== 'create' || request.status !== 200 || request.name === undefined) continue;
    if (request.purpose === 'race') note(`${request.id}`, request.name);
    const event = folded.byRequest.get(request.seq);
    if (event !== undefined)
      note(`${request.id}#${incarnation(folded.byId.get(request.id) ?? [], event)}`, request.name);
  }
  return [...bodies]
    .filter(([, names]) => names.size > 1)
    .map(([key, names]) => ({
      kind: 'two-bodies' as const,
      id: key.split('#')[0] ?? key,
      detail: `${key}: 200 for ${[...names].map((name) => `"${name}"`).join(' and ')}`,
    }));
}

/** How many effective deletes of the id precede `event`. */
function incarnation(events: readonly FoldedEvent[], event: FoldedEvent): number {
  return events.filter((other) => other.offset < event.offset && other.effective && other.type === 'ReportDeleted')
    .length;
}
