// What this instance's writes came to lately, for /readyz: "not ready" while writes are answered
// 503 (the log or the projection did not confirm them in time) and none is confirmed. The log's own
// health sees only the log; a write can also wait on the projection, which follows what other
// instances write (on Kafka, a paused broker once held that while the log took every write).
// Pure: the service tells it what happened, and asking does not change the answer.

/** How far back the outcomes count. */
export const WRITE_OUTCOMES_WINDOW_MS = 2000;

export class WriteOutcomes {
  private lastConfirmedMs = Number.NEGATIVE_INFINITY;
  private lastUnconfirmedMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly windowMs = WRITE_OUTCOMES_WINDOW_MS) {}

  /** A write was acknowledged (durable and applied). */
  confirmed(atMs: number): void {
    this.lastConfirmedMs = Math.max(this.lastConfirmedMs, atMs);
  }

  /** A write was answered 503 because the log or the projection did not confirm it in time. */
  unconfirmed(atMs: number): void {
    this.lastUnconfirmedMs = Math.max(this.lastUnconfirmedMs, atMs);
  }

  /** Writes went unconfirmed within the window and none was confirmed in it. */
  failing(nowMs: number): boolean {
    return nowMs - this.lastUnconfirmedMs <= this.windowMs && nowMs - this.lastConfirmedMs > this.windowMs;
  }
}
