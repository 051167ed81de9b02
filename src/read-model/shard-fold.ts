// One shard of a sharded fold. Events of different reports commute, so a long history can be
// folded on several threads at once: each is handed every record of the file log (by the log's
// frame walker) but decodes and folds only those whose key falls in its shard, into a read model of
// its own. The idempotency
// keys need one more thing to merge: the offset where each was first seen (the earliest wins, as
// in a fold from the start). A key is the report id for every record this service writes; a
// record whose event names a report of another shard (a key that is not the id) is `misrouted`,
// and the caller folds the history on one thread instead. Pure: records' bytes in, a read model out.
import type { FrameParts } from '../log/file/frames.js';
import { decodeForFold } from './fold-decode.js';
import { applyInput, createReadModel } from './read-model.js';

/** FNV-1a over the characters of a key: the same value for a report id's string and its UTF-8 bytes (ASCII). */
function hashStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193) >>> 0;
}
const FNV_OFFSET = 0x811c9dc5;

/** The shard of a report id, of `shards`. */
export function shardOfId(id: string, shards: number): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < id.length; i += 1) hash = hashStep(hash, id.charCodeAt(i));
  return hash % shards;
}

function shardOfKeyBytes(bytes: Buffer, start: number, end: number, shards: number): number {
  let hash = FNV_OFFSET;
  for (let i = start; i < end; i += 1) hash = hashStep(hash, bytes[i] as number);
  return hash % shards;
}

/** A record skipped because it is not a valid report event. */
export interface SkippedRecord {
  readonly offset: number;
  readonly reason: string;
}

export class ShardFold {
  readonly model = createReadModel();
  /** Offset of the first record carrying each idempotency key the shard holds. */
  readonly keyOffsets = new Map<string, number>();
  /** Where the newest sealed create of this shard lies (its key is the model's newestKey). */
  newestKeyAt: number | undefined;
  readonly skipped: SkippedRecord[] = [];
  /** A record whose event belongs to another shard: the fold must not be sharded. */
  misrouted: number | undefined;
  /** The log's timestamp of the last record handed over. */
  lastTimestampMs: number | undefined;

  constructor(
    private readonly shard: number,
    private readonly shards: number,
  ) {}

  /**
   * Folds the record at `offset` (whose parts lie in `buffer`) if it is of this shard; returns
   * false once a record proves the fold must not be sharded (it is `misrouted`).
   */
  fold(buffer: Buffer, offset: number, { timestampMs, keyStart, keyEnd, end }: FrameParts): boolean {
    this.lastTimestampMs = timestampMs;
    if (shardOfKeyBytes(buffer, keyStart, keyEnd, this.shards) !== this.shard) return true;
    const input = decodeForFold(buffer, keyEnd, end);
    if (input.ok && shardOfId(input.event.data.id, this.shards) !== this.shard) {
      this.misrouted = offset;
      return false;
    }
    applyInput(this.model, { partition: 0, offset }, input);
    if (!input.ok) {
      this.skipped.push({ offset, reason: input.reason });
      return true;
    }
    const { event } = input;
    if (event.type === 'ReportCreated' && 'sealed' in event.data) this.newestKeyAt = offset;
    // Where the key was claimed: an event void as superseded carries it without claiming it.
    const key = event.data.idempotencyKey;
    if (key !== undefined && !this.keyOffsets.has(key) && this.model.keys.has(key)) this.keyOffsets.set(key, offset);
    return true;
  }
}
