// The content key of each event a tool reads (`reports events`, `verify`), from the tools' keys:
// events before the head that every key was read after are answered from that read; later ones (a
// --follow, a log written meanwhile) one key at a time, as the store holds it when asked.
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

export interface EventKeys {
  /** The key `id` of the event at `position`; undefined when the store does not hold it. */
  keyFor(position: LogPosition, id: KeyId): Promise<ContentKey | undefined>;
}

/** Reads the head of `log`, then every key; later events' keys are asked for one at a time. */
export async function eventKeys(log: EventLog, keys: ToolKeys, signal?: AbortSignal): Promise<EventKeys> {
  const covered = await log.head();
  await pause(KEY_WRITE_GRACE_MS, signal);
  const every: KeyLookup = await keys.lookup();
  return {
    async keyFor(position, id) {
      if (cursorPassed(covered, position)) return every.get(id);
      const key = await keys.get(id);
      if (key !== undefined) return key;
      await pause(KEY_WRITE_GRACE_MS, signal);
      return keys.get(id);
    },
  };
}
