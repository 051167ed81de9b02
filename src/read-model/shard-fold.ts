// One shard of a sharded fold. Events of different reports commute, so a long history can be
// folded on several threads at once: each walks every frame of the file log but decodes and folds
// only the records whose key falls in its shard, into a read model of its own. The idempotency
// keys need one more thing to merge: the offset where each was first seen (the earliest wins, as
// in a fold from the start). A key is the report id for every record this service writes; a
// record whose event names a report of another shard (a key that is not the id) is `misrouted`,
// and the caller folds the history on one thread instead. Pure: bytes in, a read model out.
import { BATCH_HEADER_BYTES } from '../log/file/batches.js';
import { FRAME_HEADER_BYTES } from '../log/file/frames.js';
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
  /** Records walked (of every shard), and the offset of the next one. */
  walked = 0;
  /** The log's timestamp of the last record walked. */
  lastTimestampMs: number | undefined;
  /** Frames left in the batch the last chunk ended inside; the walk goes on there. */
  private framesLeftInBatch = 0;

  constructor(
    private readonly shard: number,
    private readonly shards: number,
    /** Records to walk in all, from offset 0. */
    private readonly records: number,
  ) {}

  get done(): boolean {
    return this.walked >= this.records || this.misrouted !== undefined;
  }

  /**
   * Walks the frames at the start of `chunk` (which begins at a batch or frame boundary) as far as
   * they are whole in it; returns how many bytes it consumed (the next chunk starts there). Every
   * frame was checked by the log's scan before (CRCs are not checked again); a frame that does
   * not fit its batch throws: the file changed under the reader.
   */
  walk(chunk: Buffer): number {
    let at = 0;
    while (!this.done) {
      if (this.framesLeftInBatch === 0) {
        if (chunk.length - at < BATCH_HEADER_BYTES) return at;
        this.framesLeftInBatch = chunk.readUInt32BE(at + 8);
        at += BATCH_HEADER_BYTES;
        continue;
      }
      if (chunk.length - at < FRAME_HEADER_BYTES) return at;
      const frameBytes = FRAME_HEADER_BYTES + chunk.readUInt32BE(at);
      if (chunk.length - at < frameBytes) return at;
      this.frame(chunk, at, frameBytes);
      at += frameBytes;
      this.framesLeftInBatch -= 1;
    }
    return at;
  }

  private frame(chunk: Buffer, at: number, frameBytes: number): void {
    const offset = this.walked;
    this.walked += 1;
    const payload = at + FRAME_HEADER_BYTES;
    this.lastTimestampMs = chunk.readDoubleBE(payload);
    const keyStart = payload + 10;
    const keyEnd = keyStart + chunk.readUInt16BE(payload + 8);
    if (keyEnd > at + frameBytes) throw new RangeError(`record #${offset}: key longer than its frame`);
    if (shardOfKeyBytes(chunk, keyStart, keyEnd, this.shards) !== this.shard) return;
    const input = decodeForFold(chunk, keyEnd, at + frameBytes);
    if (input.ok && shardOfId(input.event.data.id, this.shards) !== this.shard) {
      this.misrouted = offset;
      return;
    }
    applyInput(this.model, { partition: 0, offset }, input);
    if (!input.ok) {
      this.skipped.push({ offset, reason: input.reason });
      return;
    }
    const { event } = input;
    if (event.type === 'ReportCreated' && 'sealed' in event.data) this.newestKeyAt = offset;
    // Where the key was claimed: an event void as superseded carries it without claiming it.
    const key = event.data.idempotencyKey;
    if (key !== undefined && !this.keyOffsets.has(key) && this.model.keys.has(key)) this.keyOffsets.set(key, offset);
  }
}
