// Waiting that a stop cuts short: resolves after `ms`, or at once when `signal` aborts, and leaves
// no listener behind on the signal either way (a loop that pauses often would pile them up).
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
