// Runs tasks that share a key one after another; tasks with no key in common run concurrently.
// This is what keeps a single process from ever writing two ReportCreated for one id, and from
// deciding two requests that carry one Idempotency-Key at the same time.
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /**
   * Runs `task` after every earlier task that shares one of `keys`. A task only ever waits for
   * tasks queued before it, so tasks with several keys cannot wait on each other in a cycle.
   */
  run<T>(keys: string | readonly string[], task: () => Promise<T>): Promise<T> {
    const unique = [...new Set(typeof keys === 'string' ? [keys] : keys)];
    const previous = Promise.all(unique.map((key) => this.tails.get(key) ?? Promise.resolve()));
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    for (const key of unique) this.tails.set(key, tail);
    void tail.then(() => {
      // Forget a key once nothing else queued behind this task, so the map does not grow forever.
      for (const key of unique) if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  get size(): number {
    return this.tails.size;
  }
}
