// Group commit as a reusable piece: items that arrive while a flush is in flight wait, and the
// next flush takes all of them at once. An item whose signal aborts while it waits is taken out of
// the queue and rejected at once, so a request that timed out neither reaches the log nor holds
// memory until the log answers again. An item with a timeout is settled by it: taken out of the
// queue if it is still there, and rejected even if its flush is still running (the caller answers
// at its deadline; the flush's result then goes nowhere). The number of waiting items is capped:
// while the log is stuck (broker paused, fsync hung) new items are refused at once instead of
// piling up.
import { Deadlines, type ScheduledDeadline } from '../deadlines.js';
import { AppendTimeoutError, LogOverloadedError } from './event-log.js';

export interface BatchItem<T, R> {
  readonly value: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
  readonly signal?: AbortSignal;
  readonly onAbort?: () => void;
  deadline?: ScheduledDeadline;
}

/** Default of REPORTS_MAX_PENDING_APPENDS: a few seconds of peak load, a few MB of memory. */
export const DEFAULT_MAX_PENDING_APPENDS = 10_000;

export interface BatcherOptions {
  /** Items allowed to wait for the next flush; one more is refused with LogOverloadedError. */
  readonly maxPending?: number;
  /** Where item timeouts are kept (one timer for all of them); a batcher of its own unless given. */
  readonly deadlines?: Deadlines;
}

export class Batcher<T, R> {
  private queue: BatchItem<T, R>[] = [];
  private flushing: Promise<void> | undefined;
  private readonly maxPending: number;
  private readonly deadlines: Deadlines;

  /** `flush` receives the values in arrival order and returns one result per value. */
  constructor(
    private readonly flush: (values: T[]) => Promise<R[]>,
    { maxPending = DEFAULT_MAX_PENDING_APPENDS, deadlines = new Deadlines() }: BatcherOptions = {},
  ) {
    this.maxPending = maxPending;
    this.deadlines = deadlines;
  }

  /** Items waiting for a flush (not those being flushed). */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Queues `value` for the next flush. With `timeoutMs`, the promise settles within it: rejected
   * with AppendTimeoutError if no flush answered by then (and dropped if none took it yet).
   */
  add(value: T, signal?: AbortSignal, timeoutMs?: number): Promise<R> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (timeoutMs !== undefined && !(timeoutMs > 0)) return Promise.reject(new AppendTimeoutError(timeoutMs));
    if (this.queue.length >= this.maxPending) return Promise.reject(new LogOverloadedError(this.maxPending));
    return new Promise((resolve, reject) => {
      const item = signal ? this.abortable(value, resolve, reject, signal) : { value, resolve, reject };
      if (timeoutMs !== undefined) item.deadline = this.deadlines.after(timeoutMs, () => this.expire(item, timeoutMs));
      this.queue.push(item);
      this.flushing ??= this.drain();
    });
  }

  private expire(item: BatchItem<T, R>, timeoutMs: number): void {
    // Still waiting: leave the queue. Already in a flush: the flush goes on, the caller is answered now.
    const index = this.queue.indexOf(item);
    if (index >= 0) this.queue.splice(index, 1);
    item.reject(new AppendTimeoutError(timeoutMs));
  }

  private abortable(
    value: T,
    resolve: (result: R) => void,
    reject: (error: unknown) => void,
    signal: AbortSignal,
  ): BatchItem<T, R> {
    const item: BatchItem<T, R> = {
      value,
      resolve,
      reject,
      signal,
      onAbort: () => {
        // Still waiting: leave the queue now. Already in a flush: the flush decides.
        const index = this.queue.indexOf(item);
        if (index < 0) return;
        this.queue.splice(index, 1);
        item.deadline?.cancel();
        reject(signal.reason);
      },
    };
    signal.addEventListener('abort', item.onAbort as () => void, { once: true });
    return item;
  }

  /** Resolves once everything queued so far has been flushed (or failed). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        for (const item of batch) if (item.onAbort) item.signal?.removeEventListener('abort', item.onAbort);
        try {
          const results = await this.flush(batch.map((item) => item.value));
          batch.forEach((item, index) => {
            item.deadline?.cancel();
            item.resolve(results[index] as R);
          });
        } catch (error) {
          for (const item of batch) {
            item.deadline?.cancel();
            item.reject(error);
          }
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}

/**
 * One read shared as appends share a flush: callers that arrive while a read is out wait for the
 * next one and all get its result. So each caller gets a result read after it asked (the read in
 * flight may have started before), with one read per round trip however many callers there are.
 */
export function sharedRead<R>(read: () => Promise<R>, options: BatcherOptions = {}): () => Promise<R> {
  const batcher = new Batcher<undefined, R>(async (callers) => {
    const result = await read();
    return callers.map(() => result);
  }, options);
  return () => batcher.add(undefined);
}
