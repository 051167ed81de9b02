// What this instance's writes came to lately, for /readyz: "not ready" while no write is confirmed
// and writes are answered 503 (the log or the projection did not confirm them in time) or have been
// waiting longer than the window. The log's own health sees only the log; a write can also wait on
// the projection, which follows what other instances write, or on the head of its partition before
// it decides; and a 503 comes only at the write timeout, later than readiness must change.
// Pure: the service tells it what happened, and asking does not change the answer.

/** How far back the outcomes count, and how long a write may wait before it counts against readiness. */
export const WRITE_OUTCOMES_WINDOW_MS = 2000;

/** A write under way, from `started` to `finished`. */
export type WriteTicket = number;

export class WriteOutcomes {
  private lastConfirmedMs = Number.NEGATIVE_INFINITY;
  private lastUnconfirmedMs = Number.NEGATIVE_INFINITY;
  /** The writes under way and when each started; insertion order is start order, so the first is the oldest. */
  private readonly underWay = new Map<WriteTicket, number>();
  private nextTicket: WriteTicket = 0;

  constructor(private readonly windowMs = WRITE_OUTCOMES_WINDOW_MS) {}

  /** A write request began (before it waits for anything). */
  started(atMs: number): WriteTicket {
    const ticket = this.nextTicket++;
    this.underWay.set(ticket, atMs);
    return ticket;
  }

  /** The write was answered, whatever the answer. */
  finished(ticket: WriteTicket): void {
    this.underWay.delete(ticket);
  }

  /** A write was acknowledged (durable and applied). */
  confirmed(atMs: number): void {
    this.lastConfirmedMs = Math.max(this.lastConfirmedMs, atMs);
  }

  /** A write was answered 503 because the log or the projection did not confirm it in time. */
  unconfirmed(atMs: number): void {
    this.lastUnconfirmedMs = Math.max(this.lastUnconfirmedMs, atMs);
  }

  /** No write was confirmed within the window, and one went unconfirmed in it or has waited longer than it. */
  failing(nowMs: number): boolean {
    if (nowMs - this.lastConfirmedMs <= this.windowMs) return false;
    if (nowMs - this.lastUnconfirmedMs <= this.windowMs) return true;
    const oldest = this.underWay.values().next();
    return !oldest.done && nowMs - oldest.value > this.windowMs;
  }
}
