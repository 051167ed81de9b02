// Group commit as a reusable piece: items that arrive while a flush is in flight wait, and the
// next flush takes all of them at once. An item whose signal aborted before its flush started is
// dropped and rejected, so a request that already timed out never reaches the log.

export interface BatchItem<T, R> {
  readonly value: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
  readonly signal?: AbortSignal;
}

export class Batcher<T, R> {
  private readonly queue: BatchItem<T, R>[] = [];
  private flushing: Promise<void> | undefined;

  /** `flush` receives the values in arrival order and returns one result per value. */
  constructor(private readonly flush: (values: T[]) => Promise<R[]>) {}

  add(value: T, signal?: AbortSignal): Promise<R> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      this.queue.push(signal ? { value, resolve, reject, signal } : { value, resolve, reject });
      this.flushing ??= this.drain();
    });
  }

  /** Resolves once everything queued so far has been flushed (or failed). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0).filter((item) => {
          if (!item.signal?.aborted) return true;
          item.reject(item.signal.reason);
          return false;
        });
        if (batch.length === 0) continue;
        try {
          const results = await this.flush(batch.map((item) => item.value));
          batch.forEach((item, index) => item.resolve(results[index] as R));
        } catch (error) {
          for (const item of batch) item.reject(error);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}
