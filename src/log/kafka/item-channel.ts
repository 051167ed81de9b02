// Several producers (one fetch loop per partition) hand batches to one reader (the projector's
// follow loop) with back-pressure: a producer's push resolves once the reader has taken its batch,
// so a slow fold slows the fetching instead of filling memory.
export class ItemChannel<T> {
  private readonly pending: Array<{ readonly items: readonly T[]; readonly taken: () => void }> = [];
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  /** Queues `items`; resolves when the reader has taken them (or the channel was closed). */
  push(items: readonly T[]): Promise<void> {
    return new Promise((taken) => {
      this.pending.push({ items, taken });
      this.notify();
    });
  }

  /** Ends the reading with `error` (after what is queued). */
  fail(error: Error): void {
    this.failure ??= error;
    this.notify();
  }

  /** Yields the pushed batches in order until `signal` aborts; throws what `fail` was given. */
  async *drain(signal: AbortSignal): AsyncIterable<readonly T[]> {
    const onAbort = () => this.notify();
    signal.addEventListener('abort', onAbort, { once: true });
    let current: (() => void) | undefined;
    try {
      while (!signal.aborted) {
        const next = this.pending.shift();
        if (next !== undefined) {
          current = next.taken;
          yield next.items;
          // Taken once the reader is done with it: its producer fetches the next batch meanwhile no sooner.
          current();
          current = undefined;
          continue;
        }
        if (this.failure !== undefined) throw this.failure;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Producers still waiting are let go: nobody reads any more.
      current?.();
      for (const { taken } of this.pending.splice(0)) taken();
    }
  }

  private notify(): void {
    this.wake?.();
    this.wake = undefined;
  }
}
