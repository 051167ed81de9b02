// Readiness and stall detection of the projection, in one place for /readyz and /metrics. The
// projector reports what it applies and when it caught up; a prober reports how far the log's
// head is ahead. The verdict is a pure function of those observations and the time: asking does
// not change the answer, however often /readyz or /metrics ask. Durations (a stall) go by a
// monotonic clock, so a wall clock that jumps neither declares a stall nor hides one; only the age
// of the newest record is wall-clock time, because the log stamps records with the wall clock.
import { cursorLag, type Cursor } from '../log/event-log.js';

/** Times on the monotonic clock (`performance.now()`), but for the log's record timestamps. */
export interface HealthObservations {
  /** When the read model first caught up with the head seen at start (undefined: not yet). */
  readonly caughtUpAtMs: number | undefined;
  readonly lastAppliedAtMs: number | undefined;
  /** The log's timestamp of the newest record applied. */
  readonly lastRecordTimestampMs: number | undefined;
  /** Records the prober last saw waiting, and since when records have been seen waiting. */
  readonly lagEvents: number;
  readonly waitingSinceMs: number | undefined;
}

export interface HealthVerdict {
  readonly caughtUp: boolean;
  readonly lagEvents: number;
  /** Records have waited longer than the stall limit and nothing was applied meanwhile. */
  readonly stalled: boolean;
  /** Age of the newest applied record while records wait, else 0. */
  readonly lagSeconds: number;
}

/** The pure detector: `nowMs` on the monotonic clock, `wallNowMs` the wall clock's now (for the lag's age). */
export function healthVerdict(
  observed: HealthObservations,
  nowMs: number,
  stallAfterMs: number,
  wallNowMs: number = nowMs,
): HealthVerdict {
  const waitingSince = observed.waitingSinceMs;
  // Waiting counts from the later of "first seen waiting" and "last applied": progress restarts the clock.
  const quietSince =
    waitingSince === undefined ? undefined : Math.max(waitingSince, observed.lastAppliedAtMs ?? waitingSince);
  const stalled = observed.lagEvents > 0 && quietSince !== undefined && nowMs - quietSince > stallAfterMs;
  const last = observed.lastRecordTimestampMs;
  return {
    caughtUp: observed.caughtUpAtMs !== undefined,
    lagEvents: observed.lagEvents,
    stalled,
    lagSeconds: observed.lagEvents > 0 && last !== undefined ? Math.max(0, (wallNowMs - last) / 1000) : 0,
  };
}

export class ProjectionHealth {
  private observed: HealthObservations = {
    caughtUpAtMs: undefined,
    lastAppliedAtMs: undefined,
    lastRecordTimestampMs: undefined,
    lagEvents: 0,
    waitingSinceMs: undefined,
  };

  constructor(
    private readonly stallAfterMs: number,
    /** The monotonic clock of the durations. */
    private readonly now: () => number = () => performance.now(),
    /** The wall clock, for the age of the newest record (stamped by the log with the wall clock). */
    private readonly wallNow: () => number = Date.now,
  ) {}

  /** The projector applied records, the newest accepted by the log at `recordTimestampMs`. */
  applied(recordTimestampMs: number | undefined): void {
    this.observed = {
      ...this.observed,
      lastAppliedAtMs: this.now(),
      lastRecordTimestampMs: recordTimestampMs ?? this.observed.lastRecordTimestampMs,
    };
  }

  caughtUp(): void {
    this.observed = { ...this.observed, caughtUpAtMs: this.observed.caughtUpAtMs ?? this.now() };
  }

  /** The prober saw the log's head while the projection stood at `projected`. */
  observedHead(projected: Cursor, head: Cursor): void {
    const lagEvents = cursorLag(projected, head);
    const waitingSinceMs = lagEvents === 0 ? undefined : (this.observed.waitingSinceMs ?? this.now());
    this.observed = { ...this.observed, lagEvents, waitingSinceMs };
  }

  verdict(): HealthVerdict {
    return healthVerdict(this.observed, this.now(), this.stallAfterMs, this.wallNow());
  }

  observations(): HealthObservations {
    return this.observed;
  }
}

/**
 * Looks at the log's head every `intervalMs` and tells `health`, so stalls are seen without anyone
 * asking. Returns a function that stops it.
 */
export function startHeadProbe({
  health,
  head,
  projected,
  intervalMs,
}: {
  health: ProjectionHealth;
  head: () => Promise<Cursor>;
  projected: () => Cursor;
  intervalMs: number;
}): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    try {
      const seen = await head();
      health.observedHead(projected(), seen);
    } catch {
      // An unreachable log is the log's own health (LogHealth), not a stall of the projection.
    }
    if (!stopped) timer = setTimeout(() => void look(), intervalMs).unref();
  };
  timer = setTimeout(() => void look(), intervalMs).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
