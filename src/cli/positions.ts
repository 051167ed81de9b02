// Log positions on the command line: `N` (partition 0, for the file log) or `P:O[,P:O…]`.
import type { Cursor, LogPosition } from '../log/event-log.js';

export function parseCursor(text: string): Map<number, number> | undefined {
  const cursor = new Map<number, number>();
  if (/^\d+$/.test(text)) return new Map([[0, Number(text)]]);
  for (const part of text.split(',')) {
    const match = /^(\d+):(\d+)$/.exec(part.trim());
    if (!match) return undefined;
    cursor.set(Number(match[1]), Number(match[2]));
  }
  return cursor.size > 0 ? cursor : undefined;
}

export function formatPosition({ partition, offset }: LogPosition): string {
  return `${partition}:${offset}`;
}

export function formatCursor(cursor: Cursor): string {
  return [...cursor].sort(([a], [b]) => a - b).map(([partition, offset]) => `${partition}:${offset}`).join(',');
}
