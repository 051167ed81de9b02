// Folds the topic with the project's own fold (projections/), as every consumer does, and links
// each event to the request that wrote it by the trace-id of its traceparent. What the checks read:
// whether each event took effect (the fold's verdict, whatever rule the fold implements). The
// service seals names: an event's name is its request's (the service sealed what it was sent), and
// the digest of a live report's content is taken of that name, so the state digest this computes
// holds the instances to the names the clients sent, through their key stores. A request
// may have written several events: a write the fold voids as decided on a stale state is decided
// again and written again, so only its last event can answer it, and the earlier ones must be void.
import { createHash } from 'node:crypto';
import { canonicalState } from '../../../projections/canonical.js';
import { decodeEvent } from '../../../projections/codec.js';
import { createState, evolve, isSealedReport, type ReportContent } from '../../../projections/reports.js';
import { isSealed } from '../../../projections/events.js';
import { contentDigest } from '../../../projections/sealing.js';
import type { RequestRecord, TopicRecord } from '../history.js';

export interface FoldedEvent {
  readonly partition: number;
  readonly offset: number;
  readonly landedMs: number;
  readonly type: 'ReportCreated' | 'ReportDeleted';
  readonly id: string;
  readonly name?: string;
  /** The fold applied it (it was not void). */
  readonly effective: boolean;
  /** The report's name right after this event, undefined when it does not exist then. */
  readonly nameAfter: string | undefined;
  /** The request that wrote it; undefined for an event no request of the run explains. */
  readonly request?: RequestRecord;
}

export interface FoldedTopic {
  /** In partition, then offset order: per id, the order every consumer folds in. */
  readonly events: readonly FoldedEvent[];
  readonly byId: ReadonlyMap<string, readonly FoldedEvent[]>;
  /** The last event carrying each request's trace-id (the one that answered it). */
  readonly byRequest: ReadonlyMap<number, FoldedEvent>;
  /** Records that are not valid events. */
  readonly invalid: number;
  /** Events without a request of this run, and events of a request that took effect before its last one. */
  readonly unexplained: readonly FoldedEvent[];
  /** SHA-256 of the canonical final state, as `reports replay` prints it. */
  readonly digest: string;
}

/**
 * Whether what `request`'s answer claims holds right after `event`: the report exists with the
 * name it created (its own event may be void when an earlier attempt of the same create landed
 * first: an identical retry), or no longer exists after a delete that took effect.
 */
export function holds(request: RequestRecord, event: FoldedEvent): boolean {
  return request.op === 'create' ? event.nameAfter === request.name : event.effective && event.nameAfter === undefined;
}

/** A live report's name: in the clear, or the name its sealed key's request sent. */
function nameOf(report: ReportContent | undefined, sealedNames: ReadonlyMap<string, string>): string | undefined {
  if (report === undefined) return undefined;
  return isSealedReport(report) ? sealedNames.get(report.sealed.key) : report.name;
}

function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.split('-')[1];
}

export function foldTopic(records: readonly TopicRecord[], requests: readonly RequestRecord[]): FoldedTopic {
  const requestByTrace = new Map(requests.map((request) => [request.traceId, request]));
  const state = createState();
  /** The name each sealed key's event carried: its request's. */
  const sealedNames = new Map<string, string>();
  const events: FoldedEvent[] = [];
  const byId = new Map<string, FoldedEvent[]>();
  const ofRequest = new Map<number, FoldedEvent[]>();
  const unexplained: FoldedEvent[] = [];
  let invalid = 0;
  const eventIds = new Set<string>();
  const ordered = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  for (const { partition, offset, timestampMs, value } of ordered) {
    const decoded = decodeEvent(value);
    if (!decoded.ok) {
      invalid += 1;
      continue;
    }
    const { event } = decoded;
    const request = requestByTrace.get(traceIdOf(event.traceparent) ?? '');
    const effective = evolve(state, event).kind !== 'void';
    const created =
      event.type === 'ReportCreated' ? (isSealed(event.data) ? request?.name : event.data.name) : undefined;
    if (event.type === 'ReportCreated' && isSealed(event.data) && created !== undefined)
      sealedNames.set(event.data.sealed.key, created);
    const name = created === undefined ? {} : { name: created };
    const nameAfter = nameOf(state.get(event.data.id), sealedNames);
    const folded: FoldedEvent = {
      partition,
      offset,
      landedMs: timestampMs,
      type: event.type,
      id: event.data.id,
      ...name,
      effective,
      nameAfter,
      ...(request ? { request } : {}),
    };
    events.push(folded);
    const ofId = byId.get(folded.id);
    if (ofId === undefined) byId.set(folded.id, [folded]);
    else ofId.push(folded);
    // A copy of an earlier record (same event id: a producer's retry wrote it twice) is no attempt
    // of its own: void, it changes nothing, and its request's attempt is the first copy.
    const copy = eventIds.has(event.id);
    eventIds.add(event.id);
    if (copy && effective) unexplained.push(folded);
    else if (copy) continue;
    else if (request === undefined) unexplained.push(folded);
    else ofRequest.set(request.seq, [...(ofRequest.get(request.seq) ?? []), folded]);
  }
  const byRequest = new Map<number, FoldedEvent>();
  for (const [seq, attempts] of ofRequest) {
    byRequest.set(seq, attempts.at(-1) as FoldedEvent);
    unexplained.push(...attempts.slice(0, -1).filter((attempt) => attempt.effective));
  }
  const digest = createHash('sha256')
    .update(
      canonicalState(state, ({ sealed }) => {
        const sent = sealedNames.get(sealed.key);
        return sent === undefined ? undefined : contentDigest({ name: sent });
      }),
    )
    .digest('hex');
  return { events, byId, byRequest, invalid, unexplained, digest };
}
