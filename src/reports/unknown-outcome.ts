// A create whose append the log could not confirm either way (AppendOutcomeUnknownError: Kafka
// answered a produce without its partition's offset, after an earlier attempt may have been
// written) is decided by the read model before it is answered 503: until the write's deadline, the
// projector is brought up to the head of the report's partition, and if the report's content is the
// box this create sealed (a fresh key and nonce: no other write has it), the create took effect.
// A chaos run saw such a create land 2.2 s before its 503, with time left to see it. Only a sealed
// create can be recognised this way: a delete leaves nothing of its own in the model, so its 503
// waits for the deadline (another chaos run saw one given 2.4 s after it was sent, its event landed
// long before: an early 503 is an answer the write's time-out has not yet earned).
import type { ReportEvent } from '../../projections/events.js';
import { isSealedReport } from '../../projections/reports.js';
import { hasKeyedHeads } from '../log/capabilities.js';
import type { EventLog } from '../log/event-log.js';
import { beforeDeadline } from '../log/settle-within.js';
import { pause } from '../pause.js';
import type { Projector } from '../projector/projector.js';

/** Between two looks at the partition's head: a write still in flight may land meanwhile. */
const LOOK_EVERY_MS = 200;

export interface UnknownOutcome {
  readonly log: EventLog;
  readonly projector: Pick<Projector, 'model' | 'reach'>;
  /** Milliseconds left before the write's deadline, as of now. */
  readonly remainingMs: () => number;
}

/**
 * Whether `event`, whose append had no answer, is found to have taken effect before the deadline:
 * a sealed create is looked for; any other write waits for the deadline, then is not found.
 */
export async function tookEffect(event: ReportEvent, outcome: UnknownOutcome): Promise<boolean> {
  if (event.type === 'ReportCreated' && 'sealed' in event.data && hasKeyedHeads(outcome.log))
    return createTookEffect(event, outcome);
  for (let left = outcome.remainingMs(); left > 0; left = outcome.remainingMs())
    await pause(Math.min(LOOK_EVERY_MS, left));
  return false;
}

/** Whether `event`, a sealed create whose append had no answer, is found to have taken effect before the deadline. */
async function createTookEffect(event: ReportEvent, { log, projector, remainingMs }: UnknownOutcome): Promise<boolean> {
  if (event.type !== 'ReportCreated' || !('sealed' in event.data) || !hasKeyedHeads(log)) return false;
  const { id, sealed } = event.data;
  const ours = () => {
    const report = projector.model.reports.get(id);
    return report !== undefined && isSealedReport(report) && report.sealed.box === sealed.box;
  };
  // Up to the deadline itself: a chaos run saw a 503 given 26 ms before it (the last look was
  // skipped when less than one interval was left) for a create that had landed long before.
  for (;;) {
    try {
      // The head read too ends by the deadline: its broker may be the one that stopped answering.
      await projector.reach(await beforeDeadline(log.latest(id), remainingMs()), remainingMs());
    } catch {
      // The head could not be read, or the model did not reach it in time: no verdict yet.
    }
    if (ours()) return true;
    const left = remainingMs();
    if (left <= 0) return false;
    await pause(Math.min(LOOK_EVERY_MS, left));
  }
}
