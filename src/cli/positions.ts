// Log positions on the command line: `N` on the file log (its one partition's record number) and
// `P:O[,P:O…]` on Kafka (partition:offset), as docs/operations.md writes them.
import type { Config } from '../config.js';
import type { Cursor, LogPosition } from '../log/event-log.js';

/** Which log a position is on: the file log has a single partition, so its positions need no partition. */
export type LogKind = 'file' | 'kafka';

export const logKind = (config: Pick<Config, 'kafka'>): LogKind => (config.kafka === undefined ? 'file' : 'kafka');

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

export function formatPosition({ partition, offset }: LogPosition, kind: LogKind): string {
  return kind === 'file' ? String(offset) : `${partition}:${offset}`;
}

export function formatCursor(cursor: Cursor, kind: LogKind): string {
  return [...cursor].sort(([a], [b]) => a - b).map(([partition, offset]) => formatPosition({ partition, offset }, kind)).join(',');
}
