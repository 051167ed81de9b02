// The reports, compactly. A Map of a million `{name, tag}` objects keyed by id strings costs about
// 135 bytes per report on the heap; this table keeps ~75: the id is two 32-bit words in an
// open-addressing index (id-index.ts: no string object, every int64 alike), and name and tag are
// bytes in large shared chunks (report-record.ts: no object, no string header) rather than JS
// values. `get` builds the `{name, tag}` value on demand, which only the HTTP answer and the
// idempotency fold do. Besides the live reports it keeps each id's version (how many events took
// effect on it), deleted ids included: a deleted report keeps its slot and version, not its record.
import type { ReportsState, StoredReport } from '../../projections/reports.js';
import { BytesOut, type BytesIn } from './bytes.js';
import { IdIndex, NO_RECORD, type IdIndexParts } from './id-index.js';
import { IdDigits, idText, parseId } from './int64-id.js';
import { readRecord, recordLength, storedLength, writeCanonicalLine, writeRecord } from './report-record.js';

/** Records are appended to chunks of this size; a larger record gets a chunk of its own. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Offsets are chunk * CHUNK_STRIDE + position, small integers while the arena is under 2 GiB. */
const CHUNK_STRIDE = 2 ** 23;
const MAX_CHUNKS = 2 ** 32 / CHUNK_STRIDE;
/** A ReportTable's contents as a structured clone carries them between threads. */
export interface ReportTableParts {
  readonly chunks: readonly ArrayBuffer[];
  readonly fill: number;
  readonly usedBytes: number;
  readonly garbageBytes: number;
  readonly index: IdIndexParts;
}

export class ReportTable implements ReportsState, Iterable<[string, StoredReport]> {
  private index = new IdIndex();
  private chunks: Buffer[] = [];
  /** Where the next record goes in the last chunk. */
  private fill = CHUNK_BYTES;
  private usedBytes = 0;
  private garbageBytes = 0;
  // (# fields: a cache, not part of what two equal tables hold.)
  /** The fold asks about one id several times in a row (has, version, then set): it is parsed and found once. */
  #lastId = '';
  /** Whether #lastId is a canonical int64 (its words in #key), and its slot (-1: not held). */
  #lastValid = false;
  #lastSlot = -1;
  readonly #key = new Uint32Array(2);
  readonly #digits = new IdDigits();

  /** The slot of `id`, or -1 (not held, or not a canonical int64 id: #lastValid tells). */
  private slotOf(id: string): number {
    if (id !== this.#lastId) {
      this.#lastId = id;
      this.#lastValid = parseId(id, this.#key);
      this.#lastSlot = this.#lastValid ? this.index.find(this.#key) : -1;
    }
    return this.#lastSlot;
  }

  /** Forgets the cached slot (the index was replaced or rehashed by a merge). */
  private forgetLast(): void {
    this.#lastId = '';
    this.#lastValid = false;
    this.#lastSlot = -1;
  }

  /** Live reports. */
  get size(): number {
    return this.index.size;
  }

  /** Deleted reports whose ids (and versions) are remembered. */
  get deletedIds(): number {
    return this.index.deletedIds;
  }

  /** Bytes of the id index (4 a slot of them are the versions). */
  get indexBytes(): number {
    return this.index.slotBytes;
  }

  /** Bytes the chunks hold (allocated, live or not): memory outside the JS heap. */
  get arenaBytes(): number {
    let total = 0;
    for (const chunk of this.chunks) total += chunk.length;
    return total;
  }

  has(id: string): boolean {
    const slot = this.slotOf(id);
    return slot >= 0 && this.index.recordAt(slot) !== NO_RECORD;
  }

  get(id: string): StoredReport | undefined {
    const slot = this.slotOf(id);
    const at = slot < 0 ? NO_RECORD : this.index.recordAt(slot);
    return at === NO_RECORD ? undefined : this.read(at);
  }

  /** How many events have taken effect on report `id` (0: none); kept after the report is deleted. */
  version(id: string): number {
    const slot = this.slotOf(id);
    return slot < 0 ? 0 : this.index.versionAt(slot);
  }

  /** Creates or replaces the report `id` (a canonical decimal int64, else RangeError); one more event on it. */
  set(id: string, report: StoredReport): this {
    const slot = this.slotOf(id);
    if (!this.#lastValid) throw new RangeError(`report id "${id.slice(0, 40)}" is not a canonical decimal int64`);
    const at = this.write(report.name, report.tag);
    if (slot < 0) {
      this.#lastSlot = this.index.add(this.#key, at, 1);
    } else {
      const previous = this.index.recordAt(slot);
      if (previous !== NO_RECORD) this.release(previous);
      this.index.update(slot, at);
    }
    this.compactIfWasteful();
    return this;
  }

  /** Deletes the live report `id` (one more event on it; its id and version stay); false when it is not live. */
  delete(id: string): boolean {
    const slot = this.slotOf(id);
    const at = slot < 0 ? NO_RECORD : this.index.recordAt(slot);
    if (at === NO_RECORD) return false;
    this.index.update(slot, NO_RECORD);
    this.release(at);
    this.compactIfWasteful();
    return true;
  }

  /**
   * Takes in every report of `other`, whose ids this table does not hold (the shards of a sharded
   * fold): its chunks are appended to this table's as they are, only its index entries are added.
   * `other` is not to be used after.
   */
  absorb(other: ReportTable): void {
    const base = this.chunks.length;
    if (base + other.chunks.length > MAX_CHUNKS) throw new RangeError('the report table is full: names and tags of live reports exceed 2 GiB');
    this.index.merge(other.index, (at) => at + base * CHUNK_STRIDE);
    this.chunks.push(...other.chunks);
    // New records go on in other's last chunk; the room left in this table's last one stays unused.
    if (other.chunks.length > 0) this.fill = other.fill;
    this.usedBytes += other.usedBytes;
    this.garbageBytes += other.garbageBytes;
    this.forgetLast();
  }

  /** What the table holds, for another thread: the chunks and index arrays move with the message. */
  parts(): ReportTableParts {
    return { chunks: this.chunks.map((chunk) => chunk.buffer as ArrayBuffer), fill: this.fill, usedBytes: this.usedBytes, garbageBytes: this.garbageBytes, index: this.index.parts() };
  }

  /** The table another thread's `parts()` described (this process built it: not checked again). */
  static fromParts(parts: ReportTableParts): ReportTable {
    const table = new ReportTable();
    table.chunks = parts.chunks.map((buffer) => Buffer.from(buffer));
    table.fill = parts.fill;
    table.usedBytes = parts.usedBytes;
    table.garbageBytes = parts.garbageBytes;
    table.index = IdIndex.fromParts(parts.index);
    return table;
  }

  /** Takes over what `other` holds, in place of this table's ids (none); `other` is not to be used after. */
  takeOver(other: ReportTable): void {
    if (this.size !== 0 || this.deletedIds !== 0) throw new Error('only an empty report table can take over another');
    this.index = other.index;
    this.chunks = other.chunks;
    this.fill = other.fill;
    this.usedBytes = other.usedBytes;
    this.garbageBytes = other.garbageBytes;
    this.forgetLast();
  }

  /** The live ids in id order. */
  *keys(): IterableIterator<string> {
    const ids: string[] = [];
    this.inIdOrder((id) => ids.push(id));
    yield* ids;
  }

  /** The live reports in id order. */
  *entries(): IterableIterator<[string, StoredReport]> {
    const positions: Array<[string, number]> = [];
    this.inIdOrder((id, at) => positions.push([id, at]));
    for (const [id, at] of positions) yield [id, this.read(at)];
  }

  [Symbol.iterator](): IterableIterator<[string, StoredReport]> {
    return this.entries();
  }

  /**
   * Feeds every live report's canonical line (`["id","name"]` or `["id","name","tag"]`, see
   * projections/canonical.ts) to `update`, in id order, as bytes. Ids are written from their words
   * and records flagged JSON-plain copied as they are stored, without making strings, which keeps
   * the digest of a million reports fast.
   */
  canonicalLines(update: (bytes: Buffer) => void): void {
    const out = new BytesOut(update);
    const { keys, count } = this.index.liveInOrder();
    const digits = this.#digits;
    for (let i = 0; i < count; i += 1) {
      const { chunk, position } = locateIn(this.chunks, keys.payload[i] as number);
      writeCanonicalLine(out, chunk, position, digits.load(keys.low[i] as number, keys.high[i] as number));
    }
    out.flush();
  }

  /** Calls `visit` with every live id and its record's position, in the canonical order of ids (projections/canonical.ts). */
  private inIdOrder(visit: (id: string, at: number) => void): void {
    const { keys, count } = this.index.liveInOrder();
    for (let i = 0; i < count; i += 1) visit(idText(keys.low[i] as number, keys.high[i] as number), keys.payload[i] as number);
  }

  /**
   * The table as bytes (the snapshot's reports section): u32 chunk count; per chunk u32 length,
   * u32 bytes used and those bytes; f64 fill, used and garbage bytes; then the id index.
   */
  writeTo(out: BytesOut): void {
    out.u32(this.chunks.length);
    this.chunks.forEach((chunk, i) => {
      // The last chunk only as far as it is filled; it gets its room back when read.
      const used = i === this.chunks.length - 1 ? Math.min(this.fill, chunk.length) : chunk.length;
      out.u32(chunk.length);
      out.u32(used);
      out.bytes(chunk, 0, used);
    });
    out.f64(this.fill);
    out.f64(this.usedBytes);
    out.f64(this.garbageBytes);
    this.index.writeTo(out);
  }

  /** Reads what writeTo wrote; throws RangeError on data that does not hold a table. */
  static readFrom(input: BytesIn): ReportTable {
    const table = new ReportTable();
    for (let chunks = input.u32(); chunks > 0; chunks -= 1) {
      const length = input.u32();
      const used = input.u32();
      if (used > length || length > Math.max(CHUNK_BYTES, 2 ** 31)) throw new RangeError(`a chunk of ${length} bytes with ${used} used`);
      // Copied out (the snapshot file's buffer is let go), with the room of a partly filled chunk back.
      const chunk = used === length ? Buffer.allocUnsafeSlow(length) : Buffer.alloc(length);
      input.bytes(used).copy(chunk);
      table.chunks.push(chunk);
    }
    table.fill = input.f64();
    table.usedBytes = input.f64();
    table.garbageBytes = input.f64();
    table.index = IdIndex.readFrom(input);
    const arena = table.chunks.length;
    table.index.forEachRecord((at) => {
      const chunkIndex = Math.floor(at / CHUNK_STRIDE);
      if (chunkIndex >= arena || at - chunkIndex * CHUNK_STRIDE >= (table.chunks[chunkIndex] as Buffer).length) throw new RangeError(`a report at ${at} points outside the table's bytes`);
    });
    return table;
  }

  private read(at: number): StoredReport {
    const { chunk, position } = locateIn(this.chunks, at);
    return readRecord(chunk, position);
  }

  private recordBytes(at: number): number {
    const { chunk, position } = locateIn(this.chunks, at);
    return storedLength(chunk, position);
  }

  private write(name: string, tag: string | undefined): number {
    const bytes = recordLength(name, tag);
    const { chunk, position, at } = this.reserve(bytes);
    writeRecord(chunk, position, name, tag);
    this.usedBytes += bytes;
    return at;
  }

  private reserve(bytes: number): { chunk: Buffer; position: number; at: number } {
    if (this.fill + bytes > CHUNK_BYTES || this.chunks.length === 0) {
      // Positions are 32-bit in the id index: 512 chunks (2 GiB of names and tags) at most.
      if (this.chunks.length >= MAX_CHUNKS) throw new RangeError('the report table is full: names and tags of live reports exceed 2 GiB');
      // A record larger than a chunk gets a chunk of its own; the next record starts a new one.
      // Zeroed, so two tables with the same records hold equal bytes (and no stale memory).
      this.chunks.push(Buffer.alloc(Math.max(CHUNK_BYTES, bytes)));
      this.fill = bytes > CHUNK_BYTES ? CHUNK_BYTES : 0;
      const chunkIndex = this.chunks.length - 1;
      if (bytes > CHUNK_BYTES) return { chunk: this.chunks[chunkIndex] as Buffer, position: 0, at: chunkIndex * CHUNK_STRIDE };
    }
    const chunkIndex = this.chunks.length - 1;
    const position = this.fill;
    this.fill += bytes;
    return { chunk: this.chunks[chunkIndex] as Buffer, position, at: chunkIndex * CHUNK_STRIDE + position };
  }

  private release(at: number): void {
    const bytes = this.recordBytes(at);
    this.usedBytes -= bytes;
    this.garbageBytes += bytes;
  }

  /** Deleted records leave holes; once they are most of the arena, the live records are copied together. */
  private compactIfWasteful(): void {
    if (this.garbageBytes < CHUNK_BYTES || this.garbageBytes < this.usedBytes) return;
    const old = this.chunks;
    this.chunks = [];
    this.fill = CHUNK_BYTES;
    this.usedBytes = 0;
    this.garbageBytes = 0;
    this.index.remap((at) => {
      const { chunk, position } = locateIn(old, at);
      const bytes = storedLength(chunk, position);
      const target = this.reserve(bytes);
      chunk.copy(target.chunk, target.position, position, position + bytes);
      this.usedBytes += bytes;
      return target.at;
    });
  }
}

function locateIn(chunks: readonly Buffer[], at: number): { chunk: Buffer; position: number } {
  const chunkIndex = Math.floor(at / CHUNK_STRIDE);
  return { chunk: chunks[chunkIndex] as Buffer, position: at - chunkIndex * CHUNK_STRIDE };
}
