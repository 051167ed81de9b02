// Followers of the writer at the end of the log wait here for the next append: the writer wakes
// them all once a batch is durable (and once more when it closes), and each reads on from its index.

/** Followers waiting for the next append. */
export class AppendWaiters {
  private readonly listeners = new Set<() => void>();

  /** Resolves at the next append (or close), or as soon as `signal` aborts. */
  next(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.listeners.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.listeners.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  wakeAll(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
