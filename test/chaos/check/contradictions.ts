// (d) No contradiction: an event whose request was not acknowledged (503, time-out, lost
// connection) may take effect, but not after an acknowledged event on the same report
// whose request was sent after the unacknowledged one was answered: that request was decided on a
// state the late event was never decided on, and the late event undoes it (issue 17, item 1).
// Judged by real time and the fold's own verdicts, so it holds whatever rule the fold implements.
import { acknowledged, unknownOutcome, type RequestRecord } from '../history.js';
import { holds, type FoldedEvent, type FoldedTopic } from './fold-topic.js';

export interface Contradiction {
  readonly id: string;
  /** The unacknowledged request whose event took effect late. */
  readonly late: RequestRecord;
  readonly lateEvent: FoldedEvent;
  /** The acknowledged requests it came after though they were sent after its answer; the last one first. */
  readonly overridden: readonly RequestRecord[];
  readonly detail: string;
}

export interface LandedUnknowns {
  /** Writes answered without acknowledgement (503, time-out, no answer). */
  readonly unknown: number;
  /** ... whose event is in the topic anyway. */
  readonly landed: number;
  /** ... and took effect in the fold. */
  readonly applied: number;
  /** ... and landed after their answer had been sent. */
  readonly landedAfterAnswer: number;
  /** The latest landing after the answer, in ms (0 when none). */
  readonly maxLateMs: number;
}

/** One per late event that took effect after acknowledged writes sent after its answer. */
export function contradictions(folded: FoldedTopic): Contradiction[] {
  const found: Contradiction[] = [];
  for (const [id, events] of folded.byId) {
    events.forEach((event, index) => {
      const late = event.request;
      if (!event.effective || late === undefined || !unknownOutcome(late)) return;
      // Acknowledged writes that held when their event was folded (an identical retry's void create included).
      const before = events.slice(0, index).reverse();
      const overridden = before.flatMap((earlier) => {
        const { request } = earlier;
        return request !== undefined &&
          acknowledged(request) &&
          holds(request, earlier) &&
          request.sentMs > late.answeredMs
          ? [request]
          : [];
      });
      const [last] = overridden;
      if (last === undefined) return;
      const detail =
        `${late.op} via ${late.instance} answered ${late.status}, yet took effect at offset ${event.offset} (landing ${event.landedMs - late.answeredMs} ms after its answer), after ` +
        `${overridden.length} acknowledged write(s) sent after that answer, the last: ${last.op}${last.name === undefined ? '' : ` "${last.name}"`} via ${last.instance} -> ${last.status}`;
      found.push({ id, late, lateEvent: event, overridden, detail });
    });
  }
  return found;
}

export function landedUnknowns(requests: readonly RequestRecord[], folded: FoldedTopic): LandedUnknowns {
  let unknown = 0;
  let landed = 0;
  let applied = 0;
  let landedAfterAnswer = 0;
  let maxLateMs = 0;
  for (const request of requests) {
    if (!unknownOutcome(request)) continue;
    unknown += 1;
    const event = folded.byRequest.get(request.seq);
    if (event === undefined) continue;
    landed += 1;
    if (event.effective) applied += 1;
    if (event.landedMs > request.answeredMs) {
      landedAfterAnswer += 1;
      maxLateMs = Math.max(maxLateMs, event.landedMs - request.answeredMs);
    }
  }
  return { unknown, landed, applied, landedAfterAnswer, maxLateMs };
}
