// The stop signal of a process that runs the service or a command: the first SIGINT or SIGTERM asks
// for a clean stop (the AbortSignal every command watches, also during a start), a second one exits
// at once. The handlers stay installed (process.on, not once): a process that is pid 1, as in a
// container without an init, ignores every signal it has no handler for, so a second SIGTERM to a
// stop that hangs would otherwise do nothing.
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

export function processStopSignal(): AbortSignal {
  const stop = new AbortController();
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    process.on(name, () => {
      if (stop.signal.aborted) process.exit(EXIT_CODES[name]);
      stop.abort();
    });
  }
  return stop.signal;
}
