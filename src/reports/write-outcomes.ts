// What this instance's writes came to lately, for /readyz, judged in the order the writes began as
// a client sees them: "not ready" once a write that began after the last one confirmed was answered
// 503 (the log or the projection did not confirm it in time), or has waited longer than
// WAITING_LIMIT_MS (its 503 comes only at the write timeout, later than readiness must change); ready
// again as soon as a write that began after those is confirmed. Judged by when writes were answered
// instead, a write stuck since before a fault and confirmed during it made the instance look able
// to write while every write begun since failed. The log's own health sees only the log; a write can
// also wait on the projection, which follows what other instances write, or on the head of its
// partition before it decides. Pure: the service tells it what happened, and asking does not change
// the answer.

/** A write waiting longer than this, with none begun after it confirmed, counts against readiness. */
export const WAITING_LIMIT_MS = 2500;
/**
 * How long a 503 counts when nothing follows it: an instance that gets no more writes must not
 * stay "not ready" for good (a load balancer would then send it none), so the log's health decides again.
 */
export const UNCONFIRMED_FOR_MS = 5000;

/** A write under way, from `started` to `finished`. */
export type WriteTicket = number;

export class WriteOutcomes {
  /** When the latest-begun confirmed write began. */
  private lastConfirmedStartMs = Number.NEGATIVE_INFINITY;
  /** The latest-begun write answered 503: when it began and when it was answered. */
  private lastUnconfirmed = { startMs: Number.NEGATIVE_INFINITY, answeredMs: Number.NEGATIVE_INFINITY };
  /** The writes under way and when each began; insertion order is start order. */
  private readonly underWay = new Map<WriteTicket, number>();
  /** Writes under way one of whose attempts the fold voided (see voided). */
  private readonly voidedTickets = new Set<WriteTicket>();
  private nextTicket: WriteTicket = 0;

  constructor(
    private readonly waitingLimitMs = WAITING_LIMIT_MS,
    private readonly unconfirmedForMs = UNCONFIRMED_FOR_MS,
  ) {}

  /** A write request began (before it waits for anything). */
  started(atMs: number): WriteTicket {
    const ticket = this.nextTicket++;
    this.underWay.set(ticket, atMs);
    return ticket;
  }

  /** The write was acknowledged (durable and applied). */
  confirmed(ticket: WriteTicket): void {
    const startMs = this.underWay.get(ticket);
    if (startMs !== undefined) this.lastConfirmedStartMs = Math.max(this.lastConfirmedStartMs, startMs);
  }

  /**
   * The write went through the log and the fold, which voided it (decided on a state another write
   * had moved on from), and the request decides again. It counts as confirmed once the request is
   * answered other than 503 (unchanged, a conflict, not found): the instance's writes reach the
   * log. Answered 503 in the end, it counts as that 503.
   */
  voided(ticket: WriteTicket): void {
    this.voidedTickets.add(ticket);
  }

  /** The write was answered 503: the log or the projection did not confirm it in time. */
  unconfirmed(ticket: WriteTicket, atMs: number): void {
    this.voidedTickets.delete(ticket);
    const startMs = this.underWay.get(ticket);
    if (startMs !== undefined && startMs >= this.lastUnconfirmed.startMs)
      this.lastUnconfirmed = { startMs, answeredMs: atMs };
  }

  /** The write was answered, whatever the answer (after `confirmed` or `unconfirmed`). */
  finished(ticket: WriteTicket): void {
    if (this.voidedTickets.delete(ticket)) this.confirmed(ticket);
    this.underWay.delete(ticket);
  }

  failing(nowMs: number): boolean {
    const { startMs, answeredMs } = this.lastUnconfirmed;
    if (startMs > this.lastConfirmedStartMs && nowMs - answeredMs <= this.unconfirmedForMs) return true;
    for (const began of this.underWay.values()) {
      if (nowMs - began <= this.waitingLimitMs) return false;
      if (began > this.lastConfirmedStartMs) return true;
    }
    return false;
  }
}
