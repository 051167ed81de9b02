// Read-your-writes: writers wait here until the projector has applied the record at their
// position, and learn what it did. Outcomes of recent positions are remembered for writers that
// ask only after their record was applied.
import type { Evolution } from '../../projections/reports.js';
import { Deadlines, type ScheduledDeadline } from '../deadlines.js';
import type { LogPosition } from '../log/event-log.js';
import { ProjectionTimeoutError } from './projection-timeout.js';

/**
 * What applying one record did; `invalid` for a record that is not a valid event (skipped); `copy`
 * for a create void as a second copy of the create that made the live report (its writer's request
 * made the report: see VoidReason).
 */
export type Outcome = Evolution['kind'] | 'copy' | 'invalid' | 'unknown';

/** The outcome a writer is told of an applied record. */
export function outcomeOf(applied: Evolution | { readonly kind: 'invalid' }): Outcome {
  return applied.kind === 'void' && applied.reason === 'copy' ? 'copy' : applied.kind;
}

interface Waiter {
  readonly position: LogPosition;
  readonly resolve: (outcome: Outcome) => void;
  readonly reject: (error: Error) => void;
  deadline: ScheduledDeadline | undefined;
  /** Another writer waiting for the same position (rare: two waitFor calls for one record). */
  next: Waiter | undefined;
}

/** Offsets per partition whose outcome is remembered for writers that ask after the record was applied. */
const RECENT_OUTCOMES = 4096;

/**
 * The outcomes of the last RECENT_OUTCOMES offsets of one partition, in a ring indexed by offset:
 * settling a record (every record, replay included) allocates nothing.
 */
class RecentOutcomes {
  private readonly offsets = new Float64Array(RECENT_OUTCOMES).fill(-1);
  private readonly outcomes: Outcome[] = new Array<Outcome>(RECENT_OUTCOMES).fill('unknown');

  remember(offset: number, outcome: Outcome): void {
    const slot = offset % RECENT_OUTCOMES;
    this.offsets[slot] = offset;
    this.outcomes[slot] = outcome;
  }

  get(offset: number): Outcome {
    const slot = offset % RECENT_OUTCOMES;
    return this.offsets[slot] === offset ? (this.outcomes[slot] as Outcome) : 'unknown';
  }
}

/** Waiters and outcomes are kept per partition and offset (numbers), so no key string is built per record. */
export class RecordWaiters {
  private readonly waiting = new Map<number, Map<number, Waiter>>();
  private readonly recent = new Map<number, RecentOutcomes>();

  /** Time-outs of all waiters are kept in `deadlines` (one timer), not in a timer each. */
  constructor(private readonly deadlines = new Deadlines()) {}

  /** The record at `position` has been applied with `outcome`. */
  settle({ partition, offset }: LogPosition, outcome: Outcome): void {
    const byOffset = this.waiting.get(partition);
    const first = byOffset?.get(offset);
    if (first !== undefined) {
      byOffset?.delete(offset);
      for (let waiter: Waiter | undefined = first; waiter !== undefined; waiter = waiter.next) {
        waiter.deadline?.cancel();
        waiter.resolve(outcome);
      }
    }
    let recent = this.recent.get(partition);
    if (recent === undefined) this.recent.set(partition, (recent = new RecentOutcomes()));
    recent.remember(offset, outcome);
  }

  /** The outcome of a position that was applied already (`unknown` if it is no longer remembered). */
  outcomeOf({ partition, offset }: LogPosition): Outcome {
    return this.recent.get(partition)?.get(offset) ?? 'unknown';
  }

  wait(position: LogPosition, timeoutMs: number): Promise<Outcome> {
    const { partition, offset } = position;
    let byOffset = this.waiting.get(partition);
    if (byOffset === undefined) this.waiting.set(partition, (byOffset = new Map<number, Waiter>()));
    const waiters = byOffset;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { position, resolve, reject, deadline: undefined, next: waiters.get(offset) };
      waiters.set(offset, waiter);
      waiter.deadline = this.deadlines.after(timeoutMs, () => {
        this.forget(waiters, offset, waiter);
        reject(new ProjectionTimeoutError(position));
      });
    });
  }

  /** Takes a timed-out waiter out of the chain of its position. */
  private forget(waiters: Map<number, Waiter>, offset: number, gone: Waiter): void {
    const first = waiters.get(offset);
    if (first === gone) {
      if (gone.next === undefined) waiters.delete(offset);
      else waiters.set(offset, gone.next);
      return;
    }
    for (let waiter = first; waiter !== undefined; waiter = waiter.next) {
      if (waiter.next === gone) {
        waiter.next = gone.next;
        return;
      }
    }
  }

  /** Rejects every writer still waiting, so none waits forever once the projector stops. */
  rejectAll(): void {
    for (const byOffset of this.waiting.values()) {
      for (const first of byOffset.values()) {
        for (let waiter: Waiter | undefined = first; waiter !== undefined; waiter = waiter.next) {
          waiter.deadline?.cancel();
          waiter.reject(new ProjectionTimeoutError(waiter.position));
        }
      }
    }
    this.waiting.clear();
  }
}
