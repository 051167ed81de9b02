// What GET /events writes, in either format: NDJSON (one shown line per event, an empty line as a
// heartbeat) or server-sent events (`id:` the position to resume after, `data:` the same line, a
// comment as a heartbeat). Pure: the feed (feed.ts) decides when, these say how.
import type { Cursor } from '../log/event-log.js';
import { formatCursor, type LogKind } from '../log/positions.js';

export type FeedFormat = 'ndjson' | 'sse';

export const FEED_CONTENT_TYPES: Readonly<Record<FeedFormat, string>> = {
  ndjson: 'application/x-ndjson',
  sse: 'text/event-stream',
};

/**
 * Where a client resumes, as `?after=` and `Last-Event-ID` take it: the position of the last event
 * sent on each partition (`N` on the file log, `P:O,…` on Kafka); null before any was sent on any.
 * `next` is the feed's cursor (the next offset of each partition).
 */
export function resumeAfter(next: Cursor, kind: LogKind): string | null {
  const sent = new Map(
    [...next].filter(([, offset]) => offset > 0).map(([partition, offset]) => [partition, offset - 1]),
  );
  return sent.size === 0 ? null : formatCursor(sent, kind);
}

/** The feed's cursor after the position `after` names: each partition's next offset (absent partitions: from their start). */
export function cursorAfter(after: Cursor): Map<number, number> {
  return new Map([...after].map(([partition, offset]) => [partition, offset + 1]));
}

/** One event: its shown line; as SSE with the position to resume after it as its id. */
export function eventFrame(format: FeedFormat, line: string, after: string): string {
  return format === 'ndjson' ? `${line}\n` : `id: ${after}\ndata: ${line}\n\n`;
}

/** Keeps a quiet feed's connection in use: an empty line (NDJSON; consumers skip empty lines), an SSE comment. */
export function heartbeatFrame(format: FeedFormat): string {
  return format === 'ndjson' ? '\n' : ': heartbeat\n\n';
}

/**
 * The last thing a feed the server ends writes: why, and where to resume (`?after=`). As SSE an
 * `end` event, which an EventSource's `message` handler does not get (listen for `end`).
 */
export function endFrame(format: FeedFormat, reason: string, after: string | null): string {
  const line = JSON.stringify({ end: reason, after });
  return format === 'ndjson' ? `${line}\n` : `event: end\ndata: ${line}\n\n`;
}
