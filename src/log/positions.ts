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

/** Why a start cannot be taken on a log ending at a head: a partition it lacks, or past its end. */
export type StartMisfit =
  | { readonly kind: 'no-partition'; readonly partition: number; readonly partitions: number }
  | { readonly kind: 'past-end'; readonly partition: number; readonly end: number };

/**
 * Why a read starting at `from` (the next offset of each partition) does not fit a log ending at
 * `head`, if it does not. A start past the end comes from another log, or from before a backup was
 * restored (its offsets are written again): a follower started there would skip, silently, every
 * event written up to it.
 */
export function startMisfit(from: Cursor, head: Cursor): StartMisfit | undefined {
  for (const [partition, next] of from) {
    const end = head.get(partition);
    if (end === undefined) return { kind: 'no-partition', partition, partitions: head.size };
    if (next > end) return { kind: 'past-end', partition, end };
  }
  return undefined;
}

/** `misfit` in words, after what named the start (`after is`, `--from is`). */
export function describeMisfit(misfit: StartMisfit, kind: LogKind): string {
  if (misfit.kind === 'no-partition')
    return `names partition ${misfit.partition}, which the log does not have (it has ${misfit.partitions === 1 ? 'partition 0' : `partitions 0-${misfit.partitions - 1}`})`;
  const last =
    misfit.end === 0
      ? kind === 'file'
        ? 'none: the log is empty'
        : `none on partition ${misfit.partition}: it is empty`
      : formatPosition({ partition: misfit.partition, offset: misfit.end - 1 }, kind);
  return `is past the end of the log (its last position is ${last}): a position from another log, or from before a backup was restored`;
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
