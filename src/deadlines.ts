// Many deadlines, one timer. Every write carries a deadline (REPORTS_WRITE_TIMEOUT_MS) and waits in
// a few places (the batcher's queue, the projector's waiters); a timer or an AbortSignal per
// request and place cost more than the rest of the request's bookkeeping together. Deadlines are
// kept in a list sorted by time and swept by a single timer armed for the earliest one. Requests
// share one write timeout, so a new deadline is almost always the latest: it is inserted from the
// tail in a step or two, and a cancellation (the common end: the write was acknowledged in time)
// only unlinks its entry.

/** One scheduled deadline; `cancel` is idempotent and a no-op once it has expired. */
export interface ScheduledDeadline {
  cancel(): void;
}

class Entry implements ScheduledDeadline {
  prev: Entry | undefined;
  next: Entry | undefined;
  linked = true;

  constructor(
    private readonly owner: Deadlines,
    readonly atMs: number,
    readonly onExpire: () => void,
  ) {}

  cancel(): void {
    if (this.linked) this.owner.unlink(this);
  }
}

export interface DeadlinesOptions {
  /** A monotonic clock in milliseconds (tests pass a fake one). */
  readonly now?: () => number;
}

export class Deadlines {
  private head: Entry | undefined;
  private tail: Entry | undefined;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (Infinity: none armed). */
  private timerAtMs = Number.POSITIVE_INFINITY;
  readonly now: () => number;

  constructor({ now = () => performance.now() }: DeadlinesOptions = {}) {
    this.now = now;
  }

  /** Deadlines scheduled and neither expired nor cancelled. */
  get size(): number {
    return this.count;
  }

  /** Calls `onExpire` once, as soon as `atMs` (on this clock) has passed, unless cancelled first. */
  at(atMs: number, onExpire: () => void): ScheduledDeadline {
    const entry = new Entry(this, atMs, onExpire);
    let before = this.tail;
    while (before !== undefined && before.atMs > atMs) before = before.prev;
    entry.prev = before;
    entry.next = before === undefined ? this.head : before.next;
    if (entry.next === undefined) this.tail = entry;
    else entry.next.prev = entry;
    if (before === undefined) this.head = entry;
    else before.next = entry;
    this.count += 1;
    if (atMs < this.timerAtMs) this.arm(atMs);
    else this.timer?.ref();
    return entry;
  }

  /** `onExpire` once `timeoutMs` from now has passed. */
  after(timeoutMs: number, onExpire: () => void): ScheduledDeadline {
    return this.at(this.now() + timeoutMs, onExpire);
  }

  /** Drops every deadline without calling it (their owners settle them some other way). */
  clear(): void {
    for (let entry = this.head; entry !== undefined; entry = entry.next) entry.linked = false;
    this.head = this.tail = undefined;
    this.count = 0;
    this.disarm();
  }

  /** Whether a timer holds the process open (only while deadlines are scheduled). */
  get holdsProcess(): boolean {
    return this.timer?.hasRef() ?? false;
  }

  /** For Entry.cancel only. */
  unlink(entry: Entry): void {
    entry.linked = false;
    if (entry.prev === undefined) this.head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === undefined) this.tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = entry.next = undefined;
    this.count -= 1;
    // A timer armed for a cancelled entry stays: it fires, finds nothing due and re-arms for the
    // new head. With the list empty it no longer holds the process open, but stays armed for the
    // next deadline (under load the list empties with every group commit; re-arming a timer then
    // would cost more than all the deadlines).
    if (this.count === 0) this.timer?.unref();
  }

  private arm(atMs: number): void {
    this.disarm();
    this.timerAtMs = atMs;
    this.timer = setTimeout(() => this.sweep(), Math.max(1, Math.ceil(atMs - this.now())));
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtMs = Number.POSITIVE_INFINITY;
  }

  private sweep(): void {
    this.timer = undefined;
    this.timerAtMs = Number.POSITIVE_INFINITY;
    const nowMs = this.now();
    try {
      // Unlink before calling, so a callback that schedules or cancels sees a consistent list.
      while (this.head !== undefined && this.head.atMs <= nowMs) {
        const due = this.head;
        this.unlink(due);
        due.onExpire();
      }
    } finally {
      if (this.head !== undefined && this.head.atMs < this.timerAtMs) this.arm(this.head.atMs);
    }
  }
}
