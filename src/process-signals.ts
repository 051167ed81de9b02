// The stop signal of a process that runs the service or a command: the first SIGINT or SIGTERM asks
// for a clean stop (the AbortSignal every command watches, also during a start), a second one ends
// the process at once. The handlers stay installed (process.on, not once): a process that is pid 1,
// as in a container without an init, ignores every signal it has no handler for, so a second
// SIGTERM to a stop that hangs would otherwise do nothing.
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

export function processStopSignal(): AbortSignal {
  const stop = new AbortController();
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    process.on(name, () => {
      if (!stop.signal.aborted) return stop.abort();
      // At once means by the signal itself, with its default action, as a process without a handler
      // ends. Not process.exit: Node's exit waits for libuv's threads, and one blocked for ever (an
      // open of a FIFO nobody writes to) kept the process running through any number of signals.
      process.removeAllListeners(name);
      process.kill(process.pid, name);
      // Only as pid 1 of a namespace is the signal ignored even so; then exit as it would have.
      process.exit(EXIT_CODES[name]);
    });
  }
  return stop.signal;
}

/** Requests to reload what may change while the service runs (the tokens). */
export interface ReloadRequests {
  /** Calls `listener` with the request's name on each request; returns the function that stops it. */
  subscribe(listener: (trigger: string) => void): () => void;
}

/**
 * SIGHUP as reload requests, for `reports serve` only (any other command ends on a hang-up, as a
 * tool does). Installed with the stop signals, before the rest of the program is loaded: Node's
 * default for SIGHUP ends the process, so one sent during the start would otherwise kill it. One
 * that comes before anyone listens is passed on to the first listener (the start may have read the
 * tokens before the file changed).
 */
export function processReloadSignal(): ReloadRequests {
  const listeners = new Set<(trigger: string) => void>();
  let missed = false;
  process.on('SIGHUP', () => {
    if (listeners.size === 0) missed = true;
    for (const listener of listeners) listener('SIGHUP');
  });
  return {
    subscribe(listener) {
      listeners.add(listener);
      if (missed) {
        missed = false;
        listener('SIGHUP');
      }
      return () => void listeners.delete(listener);
    },
  };
}
