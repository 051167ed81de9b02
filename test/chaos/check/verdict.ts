// Everything the checker concludes about one run, from its history alone.
import { acknowledged, type InstanceStop, type RequestRecord, type RunHistory } from '../history.js';
import { availabilityPerFault, type FaultAvailability } from './availability.js';
import { contradictions, landedUnknowns, type Contradiction, type LandedUnknowns } from './contradictions.js';
import { foldTopic, type FoldedTopic } from './fold-topic.js';
import { staleAnswers } from './stale-answers.js';
import { readinessProblems, type ReadinessProblem } from './readiness.js';
import { answersAgainstFold, oneBodyPerIncarnation, realTimeOrder, type WriteProblem } from './writes.js';

export interface DigestCheck {
  /** SHA-256 of the fresh fold of the topic. */
  readonly fold: string;
  readonly replay: string;
  readonly instances: readonly InstanceStop[];
  /** What disagrees with the fresh fold: an instance's digest or position, or replay's digest. */
  readonly problems: readonly string[];
}

export interface RunVerdict {
  readonly scenario: string;
  readonly requests: number;
  readonly acknowledged: number;
  /** Acknowledged writes missing from the history or void in the fold (a). */
  readonly lost: readonly WriteProblem[];
  /** 409s and 404s whose event took effect, 503s given early for a committed write (a); real-time order broken (b); two bodies answered 200 (c). */
  readonly misanswered: readonly WriteProblem[];
  readonly reordered: readonly WriteProblem[];
  readonly twoBodies: readonly WriteProblem[];
  /** Answers true of no moment of their request (e): decided on a state older than the request. */
  readonly stale: readonly WriteProblem[];
  readonly contradictions: readonly Contradiction[];
  readonly landed: LandedUnknowns;
  readonly invalidRecords: number;
  /** Events no request explains, and second events of one request. */
  readonly unexplainedEvents: number;
  readonly digests: DigestCheck;
  readonly faults: readonly FaultAvailability[];
  readonly readiness: readonly ReadinessProblem[];
  readonly folded: FoldedTopic;
}

/** `P:O,...` without partitions at offset 0 (a read model has no cursor entry for an empty partition). */
function nonEmpty(position: string): string {
  return position
    .split(',')
    .filter((entry) => entry !== '' && !entry.endsWith(':0'))
    .join(',');
}

/**
 * The live reports whose create `reports events` printed without content: their key was destroyed
 * or never written, so every instance digests them as unopenable while the fold holds their name.
 */
export function liveWithoutKey(folded: FoldedTopic, unopened: readonly string[]): string[] {
  const gone = new Set(unopened);
  const problems: string[] = [];
  for (const [id, events] of folded.byId) {
    const last = events.at(-1);
    if (last === undefined || last.nameAfter === undefined) continue;
    const create = [...events].reverse().find((event) => event.type === 'ReportCreated' && event.effective);
    if (create === undefined || !gone.has(`${create.partition}:${create.offset}`)) continue;
    const story = events.map(
      (event) =>
        `${event.type === 'ReportCreated' ? 'create' : 'delete'} ${event.partition}:${event.offset}${event.effective ? '' : ' (void)'}${event.request ? ` by request ${event.request.seq} via ${event.request.instance} -> ${event.request.status}` : ''}`,
    );
    problems.push(
      `report ${id} is live, but its create at ${create.partition}:${create.offset} no longer opens (its key is not in the key topic): ${story.join('; ')}`,
    );
  }
  return problems;
}

function digestCheck(history: RunHistory, folded: FoldedTopic): DigestCheck {
  const fold = folded.digest;
  const problems: string[] = [...liveWithoutKey(folded, history.unopened ?? [])];
  if (history.replayDigest !== fold)
    problems.push(`reports replay printed ${history.replayDigest}, the fresh fold gives ${fold}`);
  for (const stop of history.stops) {
    if (stop.digest !== fold)
      problems.push(`instance ${stop.instance} stopped with digest ${stop.digest}, the fresh fold gives ${fold}`);
    if (nonEmpty(stop.position) !== nonEmpty(history.topicEnd))
      problems.push(`instance ${stop.instance} stopped at ${stop.position}, the topic ends at ${history.topicEnd}`);
  }
  return { fold, replay: history.replayDigest, instances: history.stops, problems };
}

export function judge(history: RunHistory): RunVerdict {
  const folded = foldTopic(history.topic, history.requests);
  const answers = answersAgainstFold(history.requests, folded, history.writeTimeoutMs);
  return {
    scenario: history.scenario,
    requests: history.requests.length,
    acknowledged: history.requests.filter(acknowledged).length,
    lost: answers.filter((problem) => problem.kind === 'lost'),
    misanswered: answers.filter((problem) => problem.kind === 'misanswered'),
    reordered: realTimeOrder(history.requests, folded),
    twoBodies: oneBodyPerIncarnation(history.requests, folded),
    stale: staleAnswers(history.requests, folded),
    contradictions: contradictions(folded),
    landed: landedUnknowns(history.requests, folded),
    invalidRecords: folded.invalid,
    unexplainedEvents: folded.unexplained.length,
    digests: digestCheck(history, folded),
    faults: availabilityPerFault(history.faults, history.endMs, history.requests, history.partitions),
    readiness: readinessProblems(
      history.requests,
      history.polls,
      history.endMs,
      landedBeforeAnswer(history.requests, folded),
      true,
    ),
    folded,
  };
}

/** The requests whose event had landed by their answer: the log took them (for a 409 or 404, the fold decided against them). */
function landedBeforeAnswer(requests: readonly RequestRecord[], folded: FoldedTopic): Set<number> {
  const landed = (request: RequestRecord) => {
    const event = folded.byRequest.get(request.seq);
    return event !== undefined && event.landedMs <= request.answeredMs;
  };
  return new Set(requests.filter(landed).map((request) => request.seq));
}

/** The report `id` ends with in the fold: its name, or undefined when it does not exist. */
export function finalName(folded: FoldedTopic, id: string): string | undefined {
  const last = (folded.byId.get(id) ?? []).filter((event) => event.effective).pop();
  return last?.type === 'ReportCreated' ? last.name : undefined;
}
