// Small promise tools for tests that wait on real I/O. `withTimeout` is a guard that turns a hang
// into a failure naming what was awaited; it never asserts on how long anything took.
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves once `condition()` holds, looking every `everyMs`; fails naming `what` after `timeoutMs`.
 * For tests that wait for something to happen, rather than for a time after which it should have.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 15_000, everyMs = 5 } = {},
): Promise<void> {
  let given = false;
  const poll = async () => {
    while (!given && !(await condition())) await new Promise((resolve) => setTimeout(resolve, everyMs));
  };
  try {
    await withTimeout(poll(), timeoutMs, what);
  } finally {
    given = true;
  }
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Asserts that `promise` rejects, and returns the error for further checks. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
