// The content key of each event a tool reads (`reports events`), from the tools' keys: events
// before the head that every key was read after are answered from that read while it is fresh;
// later ones (a --follow, a log written meanwhile) one key at a time, as the store holds it when
// asked. A read of every key is fresh for FRESH_MS only: a tool whose output is read slowly (a full
// pipe holds its writes back for as long as its reader likes) must not open, seconds later, a
// create whose report was deleted meanwhile. Past that, a key the read held is asked for again.
import { cursorPassed, type EventLog, type LogPosition } from '../log/event-log.js';
import type { ContentKey, KeyId, KeyLookup } from '../keys/key-store.js';
import type { ToolKeys } from '../keys/tool-keys.js';
import { pause } from '../pause.js';

/**
 * The embedded log writes a batch and its keys side by side: a reader beside the server may see the
 * batch a moment before its keys. Every key is read this long after the head it serves, and a key
 * missing for an event past that head is looked for once more after this long.
 */
export const KEY_WRITE_GRACE_MS = 50;
/** How long a read of every key answers by itself; a key it held is asked for again after that. */
export const FRESH_MS = 50;

export interface EventKeys {
  /** The key `id` of the event at `position`; undefined when the store does not hold it. */
  keyFor(position: LogPosition, id: KeyId): Promise<ContentKey | undefined>;
}

/** Reads the head of `log`, then every key; later events' keys are asked for one at a time. */
export async function eventKeys(
  log: EventLog,
  keys: ToolKeys,
  signal?: AbortSignal,
  clockMs: () => number = () => performance.now(),
): Promise<EventKeys> {
  const covered = await log.head();
  await pause(KEY_WRITE_GRACE_MS, signal);
  // From before the read: the read shows keys.db as it was at some moment after this.
  const takenAt = clockMs();
  const every: KeyLookup = await keys.lookup();
  return {
    async keyFor(position, id) {
      if (cursorPassed(covered, position)) {
        const held = every.get(id);
        // A key destroyed is never held again: only one the read held can have gone since.
        if (held === undefined || clockMs() - takenAt <= FRESH_MS) return held;
        return keys.get(id);
      }
      const key = await keys.get(id);
      if (key !== undefined) return key;
      await pause(KEY_WRITE_GRACE_MS, signal);
      return keys.get(id);
    },
  };
}
