// The projected state every answer is decided on: refused (503) past the request's deadline or
// while the projector still catches up with the log at start, and, before an answer that writes
// nothing, brought up to the head of the report's partition, so that it holds every write made
// before the request, by any instance (a log with keyed heads: log/capabilities.ts).
import type { ReportsView } from '../../projections/reports.js';
import { UnavailableError } from '../errors.js';
import { hasKeyedHeads } from '../log/capabilities.js';
import type { EventLog } from '../log/event-log.js';
import { beforeDeadline } from '../log/settle-within.js';
import type { Projector } from '../projector/projector.js';

export interface ProjectedState {
  /** The projected state; 503 past `deadline`, or while it catches up with the log at start. */
  readonly readyState: (deadline: number) => ReportsView;
  /**
   * Waits until the projection holds everything written for `id` (by any instance) before now.
   * Returns false when the log has no other writer, so the state is fresh already.
   */
  readonly caughtUpWith: (id: string, deadline: number) => Promise<boolean>;
}

export interface ProjectedStateDeps {
  readonly log: EventLog;
  readonly projector: Projector;
  readonly clockMs: () => number;
  /** Milliseconds left before `deadline`, at least 1. */
  readonly remaining: (deadline: number) => number;
  /** Called for every read of a partition's head (metrics). */
  readonly onHeadRead?: () => void;
  /** What a failure of the log or of the projection becomes for the client (503). */
  readonly answerTo: (error: unknown, id: string) => unknown;
}

export function createProjectedState({
  log,
  projector,
  clockMs,
  remaining,
  onHeadRead,
  answerTo,
}: ProjectedStateDeps): ProjectedState {
  const readyState = (deadline: number): ReportsView => {
    if (clockMs() >= deadline)
      throw new UnavailableError('the request waited too long behind others for the same report; retry');
    if (!projector.isCaughtUp())
      throw new UnavailableError('the read model is still catching up with the event log; retry shortly');
    return projector.model.reports;
  };
  const caughtUpWith = async (id: string, deadline: number): Promise<boolean> => {
    if (!hasKeyedHeads(log)) return false;
    onHeadRead?.();
    try {
      // The head read is bounded by the deadline too: its broker may be the one that stopped answering.
      const target = await beforeDeadline(log.latest(id), remaining(deadline));
      await projector.reach(target, remaining(deadline));
      return true;
    } catch (error) {
      throw answerTo(error, id);
    }
  };
  return { readyState, caughtUpWith };
}
