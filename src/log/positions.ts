// Log positions as people and clients write them: `N` on the file log (its one partition's record
// number) and `P:O[,P:O…]` on Kafka (partition:offset), as docs/operations.md writes them. The
// `reports` command takes and prints them, and so does the feed (GET /events).
import type { Config } from '../config.js';
import type { Cursor, LogPosition } from './event-log.js';

/** Which log a position is on: the file log has a single partition, so its positions need no partition. */
export type LogKind = 'file' | 'kafka';

export const logKind = (config: Pick<Config, 'kafka'>): LogKind => (config.kafka === undefined ? 'file' : 'kafka');

/**
 * `N` or `P:O[,P:O…]`; undefined when malformed, when a number is too large to be exact, or when
 * a partition comes twice (which of the two was meant cannot be told).
 */
export function parseCursor(text: string): Map<number, number> | undefined {
  const cursor = new Map<number, number>();
  if (/^\d+$/.test(text)) return exact(text) ? new Map([[0, Number(text)]]) : undefined;
  for (const part of text.split(',')) {
    const match = /^(\d+):(\d+)$/.exec(part.trim());
    if (!match || !exact(match[1] as string) || !exact(match[2] as string)) return undefined;
    if (cursor.has(Number(match[1]))) return undefined;
    cursor.set(Number(match[1]), Number(match[2]));
  }
  return cursor.size > 0 ? cursor : undefined;
}

/**
 * Whether `cursor` names only partitions the log can have: the file log has partition 0 alone
 * (`N`, or `0:N`). A position of another partition there was read as "from the start", and the
 * positions handed back then dropped it: a feed resumed with them was refused.
 */
export function cursorFits(cursor: Cursor, kind: LogKind): boolean {
  return kind === 'kafka' || [...cursor.keys()].every((partition) => partition === 0);
}

/** Digits that name a number JavaScript holds exactly (`99999999999999999999` would be read as another). */
function exact(digits: string): boolean {
  return Number.isSafeInteger(Number(digits));
}

export function formatPosition({ partition, offset }: LogPosition, kind: LogKind): string {
  return kind === 'file' ? String(offset) : `${partition}:${offset}`;
}

export function formatCursor(cursor: Cursor, kind: LogKind): string {
  return [...cursor]
    .sort(([a], [b]) => a - b)
    .map(([partition, offset]) => formatPosition({ partition, offset }, kind))
    .join(',');
}
