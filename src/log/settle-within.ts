import { AppendTimeoutError } from './event-log.js';

/**
 * Waits for `work` at most `ms`, never failing: for clean-ups (disconnects) that must not hold a
 * shutdown when the other side is gone.
 */
export async function settleWithin(ms: number, work: Promise<unknown>): Promise<void> {
  await valueWithin(ms, work);
}

/** `work`'s result, or an AppendTimeoutError once `ms` have passed (the work itself is left to finish). */
export async function beforeDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new AppendTimeoutError(ms)), ms)));
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** `work`'s value, or undefined when it fails or has not come within `ms` (the work itself is left to finish). */
export async function valueWithin<T>(ms: number, work: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([work.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
