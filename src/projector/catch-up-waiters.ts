// Readers that need fresh state wait here until the projection's cursor reaches a target (the head
// of a partition seen when their request arrived). Checked after every move of the cursor; cheap
// while nobody waits.
import { Deadlines, type ScheduledDeadline } from '../deadlines.js';
import { cursorReached, type Cursor } from '../log/event-log.js';
import { ProjectionTimeoutError } from './projection-timeout.js';

interface Waiter {
  readonly target: Cursor;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  deadline: ScheduledDeadline | undefined;
}

/** The position named in a timeout: the first partition of the target. */
function firstPosition(target: Cursor): { partition: number; offset: number } {
  const [entry] = target;
  return { partition: entry?.[0] ?? 0, offset: entry?.[1] ?? 0 };
}

export class CatchUpWaiters {
  private readonly waiting = new Set<Waiter>();

  /** Time-outs of all waiters are kept in `deadlines` (one timer), not in a timer each. */
  constructor(private readonly deadlines = new Deadlines()) {}

  wait(cursor: Cursor, target: Cursor, timeoutMs: number): Promise<void> {
    if (cursorReached(cursor, target)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { target, resolve, reject, deadline: undefined };
      waiter.deadline = this.deadlines.after(timeoutMs, () => {
        this.waiting.delete(waiter);
        reject(new ProjectionTimeoutError(firstPosition(target)));
      });
      this.waiting.add(waiter);
    });
  }

  /** The cursor moved: release every waiter whose target it reached. */
  moved(cursor: Cursor): void {
    for (const waiter of this.waiting) {
      if (!cursorReached(cursor, waiter.target)) continue;
      waiter.deadline?.cancel();
      this.waiting.delete(waiter);
      waiter.resolve();
    }
  }

  rejectAll(): void {
    for (const waiter of this.waiting) {
      waiter.deadline?.cancel();
      waiter.reject(new ProjectionTimeoutError(firstPosition(waiter.target)));
    }
    this.waiting.clear();
  }
}
