// The live reports, compactly. A Map of a million `{name, tag}` objects keyed by id strings costs
// about 135 bytes per report on the heap; this table keeps ~70: the id is a number key in an
// open-addressing index when it is a safe integer (no string object), and name and tag are bytes
// in large shared chunks (report-record.ts: no object, no string header) rather than JS values.
// `get` builds the `{name, tag}` value on demand, which only the HTTP answer and the idempotency
// fold do.
import { compareIds } from '../../projections/canonical.js';
import type { ReportsState, StoredReport } from '../../projections/reports.js';
import { BytesOut, type BytesIn } from './bytes.js';
import { IdIndex, tableKey, type IdIndexParts } from './id-index.js';
import { readRecord, recordLength, recordWithin, storedLength, writeCanonicalLine, writeRecord } from './report-record.js';

export { tableKey } from './id-index.js';

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
  /** The fold asks about one id several times in a row (has, then set): its key is parsed once. */
  // (# fields: a cache, not part of what two equal tables hold.)
  #lastId = '';
  #lastKey: number | string = '';
  /** The key the last `has` found absent (the fold asks has, then sets): set can skip its lookup. */
  #knownAbsent: number | string | undefined;
  /** Each id's version (events that took effect on it), deleted ids included. PLACEHOLDER: moves into the id index. */
  #versions = new Map<number | string, number>();

  version(id: string): number {
    return this.#versions.get(this.keyOf(id)) ?? 0;
  }

  private bump(key: number | string): void {
    this.#versions.set(key, (this.#versions.get(key) ?? 0) + 1);
  }

  private keyOf(id: string): number | string {
    if (id !== this.#lastId) {
      this.#lastId = id;
      this.#lastKey = tableKey(id);
    }
    return this.#lastKey;
  }

  get size(): number {
    return this.index.size;
  }

  /** Bytes the chunks hold (allocated, live or not): memory outside the JS heap. */
  get arenaBytes(): number {
    let total = 0;
    for (const chunk of this.chunks) total += chunk.length;
    return total;
  }

  has(id: string): boolean {
    const key = this.keyOf(id);
    const found = this.index.has(key);
    this.#knownAbsent = found ? undefined : key;
    return found;
  }

  get(id: string): StoredReport | undefined {
    const at = this.index.get(this.keyOf(id));
    return at === undefined ? undefined : this.read(at);
  }

  set(id: string, report: StoredReport): this {
    const key = this.keyOf(id);
    const previous = key === this.#knownAbsent ? undefined : this.index.get(key);
    this.#knownAbsent = undefined;
    if (previous !== undefined) this.release(previous);
    this.index.set(key, this.write(report.name, report.tag));
    this.bump(key);
    this.compactIfWasteful();
    return this;
  }

  delete(id: string): boolean {
    this.#knownAbsent = undefined;
    const key = this.keyOf(id);
    const at = this.index.get(key);
    if (at === undefined) return false;
    this.index.delete(key);
    this.bump(key);
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
    this.index.reserve(other.size);
    other.index.forEach((at, key) => {
      if (this.index.has(key)) throw new Error(`report ${String(key)} is in both tables`);
      this.index.set(key, at + base * CHUNK_STRIDE);
    });
    this.chunks.push(...other.chunks);
    // New records go on in other's last chunk; the room left in this table's last one stays unused.
    if (other.chunks.length > 0) this.fill = other.fill;
    this.usedBytes += other.usedBytes;
    this.garbageBytes += other.garbageBytes;
    this.#knownAbsent = undefined;
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

  /** Takes over what `other` holds, in place of this table's reports (none); `other` is not to be used after. */
  takeOver(other: ReportTable): void {
    if (this.size !== 0) throw new Error('only an empty report table can take over another');
    this.index = other.index;
    this.chunks = other.chunks;
    this.fill = other.fill;
    this.usedBytes = other.usedBytes;
    this.garbageBytes = other.garbageBytes;
    this.#knownAbsent = undefined;
  }

  /** The ids in id order. */
  *keys(): IterableIterator<string> {
    const ids: string[] = [];
    this.inIdOrder((id) => ids.push(id));
    yield* ids;
  }

  /** The reports in id order. */
  *entries(): IterableIterator<[string, StoredReport]> {
    const positions: Array<[string, number]> = [];
    this.inIdOrder((id, at) => positions.push([id, at]));
    for (const [id, at] of positions) yield [id, this.read(at)];
  }

  [Symbol.iterator](): IterableIterator<[string, StoredReport]> {
    return this.entries();
  }

  /**
   * Feeds every report's canonical line (`["id","name"]` or `["id","name","tag"]`, see projections/
   * canonical.ts) to `update`, in id order, as bytes. Records flagged JSON-plain are copied as
   * they are stored, without making strings, which keeps the digest of a million reports fast.
   */
  canonicalLines(update: (bytes: Buffer) => void): void {
    const out = new BytesOut(update);
    this.inIdOrder((id, at) => {
      const { chunk, position } = locateIn(this.chunks, at);
      writeCanonicalLine(out, chunk, position, id);
    });
    out.flush();
  }

  /** Calls `visit` with every id and its record's position, in the canonical order of ids (projections/canonical.ts). */
  private inIdOrder(visit: (id: string, at: number) => void): void {
    const named: string[] = [];
    this.index.forEach((_at, key) => {
      if (typeof key === 'string') named.push(key);
    });
    named.sort(compareIds);
    // Ids that are not safe integers lie beyond ±2^53: the negative ones before every number, the rest after.
    const firstPositive = named.findIndex((id) => !id.startsWith('-'));
    const split = firstPositive === -1 ? named.length : firstPositive;
    const visitNamed = (id: string) => visit(id, this.index.get(id) as number);
    named.slice(0, split).forEach(visitNamed);
    this.index.forEachNumberInOrder((key, at) => visit(String(key), at));
    named.slice(split).forEach(visitNamed);
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

  /** Reads what writeTo wrote; throws RangeError on data that does not hold a table (or a record past its chunk's written bytes, as earlier versions wrote a large one). */
  static readFrom(input: BytesIn): ReportTable {
    const table = new ReportTable();
    const usedOf: number[] = [];
    for (let chunks = input.u32(); chunks > 0; chunks -= 1) {
      const length = input.u32();
      const used = usedOf[usedOf.push(input.u32()) - 1] as number;
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
    table.index.forEach((at, key) => {
      const chunkIndex = Math.floor(at / CHUNK_STRIDE);
      if (chunkIndex >= arena || !recordWithin(table.chunks[chunkIndex] as Buffer, at - chunkIndex * CHUNK_STRIDE, usedOf[chunkIndex] as number)) throw new RangeError(`report ${String(key)} points outside the table's bytes`);
      if (typeof key === 'string' && tableKey(key) !== key) throw new RangeError(`report key ${key} is not in canonical form`);
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
      // A record larger than a chunk gets a chunk of its own, full at once (fill = its length: a snapshot
      // writes it all); the next record starts a new one. Zeroed: equal tables, equal bytes, no stale memory.
      this.chunks.push(Buffer.alloc(Math.max(CHUNK_BYTES, bytes)));
      this.fill = bytes > CHUNK_BYTES ? bytes : 0;
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
