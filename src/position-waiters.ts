// Read-your-writes: writers wait here until the projector has applied the record at their
// position, and learn what it did. Outcomes of recent positions are remembered for writers that
// ask only after their record was applied.
import type { Evolution } from '../projections/reports.js';
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
  readonly timer: NodeJS.Timeout;
}

/** Per partition, the outcomes of this many latest offsets are remembered for writers that ask after the record was applied. */
const RECENT_OUTCOMES = 4096;
const key = ({ partition, offset }: LogPosition) => `${partition}:${offset}`;
/** Outcomes as small codes in a ring per partition: settling a record allocates nothing (it runs for every record folded). */
const OUTCOMES: readonly Outcome[] = ['unknown', 'created', 'deleted', 'void', 'invalid'];
const CODES = new Map<Outcome, number>(OUTCOMES.map((outcome, code) => [outcome, code]));

interface RecentOutcomes {
  readonly codes: Uint8Array;
  /** The highest offset settled on the partition. */
  latest: number;
}

export class PositionWaiters {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private readonly recent = new Map<number, RecentOutcomes>();

  /** The record at `position` has been applied with `outcome`. */
  settle(position: LogPosition, outcome: Outcome): void {
    if (this.waiting.size > 0) this.release(position, outcome);
    let ring = this.recent.get(position.partition);
    if (ring === undefined) {
      ring = { codes: new Uint8Array(RECENT_OUTCOMES), latest: -1 };
      this.recent.set(position.partition, ring);
    }
    ring.codes[position.offset % RECENT_OUTCOMES] = CODES.get(outcome) ?? 0;
    if (position.offset > ring.latest) ring.latest = position.offset;
  }

  private release(position: LogPosition, outcome: Outcome): void {
    const id = key(position);
    const waiters = this.waiting.get(id);
    if (!waiters) return;
    this.waiting.delete(id);
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(outcome);
    }
  }

  /** The outcome of a position that was applied already (`unknown` if it is no longer remembered). */
  outcomeOf({ partition, offset }: LogPosition): Outcome {
    const ring = this.recent.get(partition);
    if (ring === undefined || offset > ring.latest || ring.latest - offset >= RECENT_OUTCOMES) return 'unknown';
    return OUTCOMES[ring.codes[offset % RECENT_OUTCOMES] ?? 0] ?? 'unknown';
  }

  wait(position: LogPosition, timeoutMs: number): Promise<Outcome> {
    const id = key(position);
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(id) ?? new Set<Waiter>();
      this.waiting.set(id, waiters);
      const waiter: Waiter = {
        position,
        resolve,
        reject,
        timer: setTimeout(() => {
          waiters.delete(waiter);
          if (waiters.size === 0) this.waiting.delete(id);
          reject(new ProjectionTimeoutError(position));
        }, timeoutMs),
      };
      waiters.add(waiter);
    });
  }

  /** Rejects every writer still waiting, so none waits forever once the projector stops. */
  rejectAll(): void {
    for (const waiters of this.waiting.values()) {
      for (const waiter of waiters) {
        clearTimeout(waiter.timer);
        waiter.reject(new ProjectionTimeoutError(waiter.position));
      }
    }
    this.waiting.clear();
  }
}
