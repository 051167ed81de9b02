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
    if (typeof keys === 'string') return this.runOne(keys, task);
    const unique = [...new Set(keys)];
    if (unique.length === 1) return this.runOne(unique[0] as string, task);
    // A key with no tail has nothing to wait for: resolved at once.
    const previous = Promise.all(unique.map((key) => this.tails.get(key) ?? Promise.resolve()));
    const result = previous.then(task, task);
    const tail: Promise<void> = result.then(
      () => this.forget(unique, tail),
      () => this.forget(unique, tail),
    );
    for (const key of unique) this.tails.set(key, tail);
    return result;
  }

  /** One key (the common case: a request without Idempotency-Key): no arrays, and nothing to wait for when the key is free. */
  private runOne<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    const result = previous === undefined ? start(task) : previous.then(task, task);
    const forget = () => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = result.then(forget, forget);
    this.tails.set(key, tail);
    return result;
  }

  /** Forgets keys once nothing else queued behind this task, so the map does not grow forever. */
  private forget(keys: readonly string[], tail: Promise<unknown>): void {
    for (const key of keys) if (this.tails.get(key) === tail) this.tails.delete(key);
  }

  get size(): number {
    return this.tails.size;
  }
}

/** Calls `task` now; a synchronous throw becomes a rejection, as it would inside `then`. */
function start<T>(task: () => Promise<T>): Promise<T> {
  try {
    return task();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * A request waits for earlier ones on its id and on its Idempotency-Key, so a reused key sees the
 * first outcome. Ids are decimal, so an id never looks like a `key:` entry.
 */
export function queueKeys(id: string, idempotencyKey: string | undefined): string | string[] {
  return idempotencyKey === undefined ? id : [id, `key:${idempotencyKey}`];
}
