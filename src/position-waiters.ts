// Read-your-writes: writers wait here until the projector has applied the record at their
// position, and learn what it did. Outcomes of recent positions are remembered for writers that
// ask only after their record was applied.
import type { Evolution } from '../projections/reports.js';
import { Deadlines, type ScheduledDeadline } from './deadlines.js';
import type { LogPosition } from './log/event-log.js';

/** What applying one record did; `invalid` for a record that is not a valid event (skipped). */
export type Outcome = Evolution['kind'] | 'invalid' | 'unknown';

export class ProjectionTimeoutError extends Error {
  constructor(readonly position: LogPosition) {
    super(`the projection did not reach ${position.partition}:${position.offset} in time`);
    this.name = 'ProjectionTimeoutError';
  }
}

interface Waiter {
  readonly position: LogPosition;
  readonly resolve: (outcome: Outcome) => void;
  readonly reject: (error: Error) => void;
  deadline: ScheduledDeadline | undefined;
}

/** Positions whose outcome is remembered for writers that ask after the record was applied. */
const RECENT_OUTCOMES = 4096;
const key = ({ partition, offset }: LogPosition) => `${partition}:${offset}`;

export class PositionWaiters {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private readonly recent = new Map<string, Outcome>();

  /** Time-outs of all waiters are kept in `deadlines` (one timer), not in a timer each. */
  constructor(private readonly deadlines = new Deadlines()) {}

  /** The record at `position` has been applied with `outcome`. */
  settle(position: LogPosition, outcome: Outcome): void {
    const id = key(position);
    const waiters = this.waiting.get(id);
    if (waiters) {
      this.waiting.delete(id);
      for (const waiter of waiters) {
        waiter.deadline?.cancel();
        waiter.resolve(outcome);
      }
    }
    this.recent.set(id, outcome);
    if (this.recent.size > RECENT_OUTCOMES) {
      const oldest = this.recent.keys().next();
      if (!oldest.done) this.recent.delete(oldest.value);
    }
  }

  /** The outcome of a position that was applied already (`unknown` if it is no longer remembered). */
  outcomeOf(position: LogPosition): Outcome {
    return this.recent.get(key(position)) ?? 'unknown';
  }

  wait(position: LogPosition, timeoutMs: number): Promise<Outcome> {
    const id = key(position);
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(id) ?? new Set<Waiter>();
      this.waiting.set(id, waiters);
      const waiter: Waiter = { position, resolve, reject, deadline: undefined };
      waiter.deadline = this.deadlines.after(timeoutMs, () => {
        waiters.delete(waiter);
        if (waiters.size === 0 && this.waiting.get(id) === waiters) this.waiting.delete(id);
        reject(new ProjectionTimeoutError(position));
      });
      waiters.add(waiter);
    });
  }

  /** Rejects every writer still waiting, so none waits forever once the projector stops. */
  rejectAll(): void {
    for (const waiters of this.waiting.values()) {
      for (const waiter of waiters) {
        waiter.deadline?.cancel();
        waiter.reject(new ProjectionTimeoutError(waiter.position));
      }
    }
    this.waiting.clear();
  }
}
