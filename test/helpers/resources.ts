// What the process holds open (sockets, timers, file handles…) as Node counts it, for tests that
// check a piece of work leaves nothing behind once it ended.
import { until } from './async.js';

/** How many of each kind of active resource the process holds now (the terminal's own left out). */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo())
    if (type !== 'TTYWrap') counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** The kinds of which the process holds more now than in `before`, with how many it holds. */
export function moreThan(before: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...activeResources()].filter(([type, count]) => count > (before.get(type) ?? 0)));
}

/**
 * Waits until the process holds no more of any kind than in `before` (sockets are shut down
 * asynchronously: a closed one is gone once its peer answered), failing after `timeoutMs` with what is left.
 */
export async function untilNoMoreThan(before: ReadonlyMap<string, number>, timeoutMs = 5000): Promise<void> {
  try {
    await until(() => Object.keys(moreThan(before)).length === 0, 'resources to be released', {
      timeoutMs,
      everyMs: 50,
    });
  } catch {
    throw new Error(
      `left behind: ${JSON.stringify(moreThan(before))}; before: ${JSON.stringify(Object.fromEntries(before))}`,
    );
  }
}
