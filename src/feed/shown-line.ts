// One record as `reports events` prints it and GET /events sends it: {"position","time",…marks,
// "event"} with the event a CloudEvent in structured mode as the log holds it, but for sealed
// content, which is never shown: a live report's opened with its key, anything else without the box.
import { decodeEvent, type Decoded } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { LogPosition, LogRecord } from '../log/event-log.js';
import { keyIdText, type ContentKey, type KeyId } from '../keys/key-store.js';
import { contentKeyId, openCreate, shownCreate } from '../keys/open-create.js';
import { formatPosition, type LogKind } from '../log/positions.js';

/** The content key of the event at `position`; undefined when the store does not hold it. */
export type KeyFor = (position: LogPosition, id: KeyId) => Promise<ContentKey | undefined>;

export interface ShownLine {
  /** The JSON line (without its newline). */
  readonly text: string;
  /** The event's type; undefined for a record that is not a valid event. */
  readonly type: string | undefined;
  /** The id (text) of the key that opened the line's content, when it did. */
  readonly opened?: string;
}

/** `known`: the event a record's value was encoded from in this process, if it was (EncodedEvents). */
export async function shownLine(
  record: LogRecord,
  kind: LogKind,
  keyFor: KeyFor,
  known: (value: Buffer) => ReportEvent | undefined = () => undefined,
): Promise<ShownLine> {
  const position = formatPosition(record.position, kind);
  const time = new Date(record.timestampMs).toISOString();
  // A record this process appended is known with the event its value encodes: no need to parse it again.
  const appended = known(record.value);
  const decoded: Decoded = appended === undefined ? decodeEvent(record.value) : { ok: true, event: appended };
  if (!decoded.ok) return { text: JSON.stringify({ position, time, invalid: decoded.reason }), type: undefined };
  const { event } = decoded;
  const keyId = event.type === 'ReportCreated' ? contentKeyId(event) : undefined;
  if (event.type !== 'ReportCreated' || keyId === undefined)
    return { text: JSON.stringify({ position, time, event }), type: event.type };
  const opened = openCreate(event, await keyFor(record.position, keyId));
  const shown = shownCreate(event, opened);
  const text = JSON.stringify({ position, time, ...shown.mark, event: shown.event });
  // The key's canonical text (as the eraser names destroyed keys), whatever spelling the event used.
  return opened.kind === 'opened' ? { text, type: event.type, opened: keyIdText(keyId) } : { text, type: event.type };
}
