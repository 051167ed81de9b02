// The content of the live reports (names and tags, or their sealed boxes), as records (report-record.ts) appended to large shared
// chunks: no object and no string header per report, and a snapshot or another thread takes the
// chunks as they are. A record is found by its position, chunk * CHUNK_STRIDE + offset, which the
// id table keeps in 32 bits. A deleted record leaves a hole until holes are most of the arena.
import type { ReportContent } from '../../projections/reports.js';
import type { BytesOut, BytesReader } from './bytes.js';
import { readRecord, recordEnd, recordLength, storedLength, writeRecord } from './report-record.js';

/** Records are appended to chunks of this size; a larger record gets a chunk of its own. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Positions are chunk * CHUNK_STRIDE + offset, small integers while the arena is under 2 GiB. */
const CHUNK_STRIDE = 2 ** 23;
const MAX_CHUNKS = 2 ** 32 / CHUNK_STRIDE;
const FULL = 'the report table is full: names and tags of live reports exceed 2 GiB';

/** A RecordArena's contents as a structured clone carries them between threads. */
export interface RecordArenaParts {
  readonly chunks: readonly ArrayBuffer[];
  readonly fill: number;
  readonly usedBytes: number;
  readonly garbageBytes: number;
}

export class RecordArena {
  private chunks: Buffer[] = [];
  /** Where the next record goes in the last chunk. */
  private fill = CHUNK_BYTES;
  /** The bytes of each chunk a snapshot held, for `firstNotHeld` (undefined: built here, every byte written). */
  private loadedBytes: number[] | undefined;
  private usedBytes = 0;
  private garbageBytes = 0;

  /** Bytes the chunks hold (allocated, live or not): memory outside the JS heap. */
  get allocatedBytes(): number {
    let total = 0;
    for (const chunk of this.chunks) total += chunk.length;
    return total;
  }

  /** Holes are at least `share` of the live records' bytes (by default: most of the arena): time to compact. */
  wasteful(share = 1): boolean {
    return this.garbageBytes >= CHUNK_BYTES && this.garbageBytes >= this.usedBytes * share;
  }

  /**
   * `locate` over the chunks the arena has now: the records live now stay where it finds them
   * whatever is written later (a compaction writes new chunks and leaves these as they are).
   */
  locatorNow(): (at: number) => { chunk: Buffer; position: number } {
    const chunks = [...this.chunks];
    return (at) => {
      const chunkIndex = Math.floor(at / CHUNK_STRIDE);
      return { chunk: chunks[chunkIndex] as Buffer, position: at - chunkIndex * CHUNK_STRIDE };
    };
  }

  /** The chunk and offset of the record at `at`. */
  locate(at: number): { chunk: Buffer; position: number } {
    const chunkIndex = Math.floor(at / CHUNK_STRIDE);
    return { chunk: this.chunks[chunkIndex] as Buffer, position: at - chunkIndex * CHUNK_STRIDE };
  }

  /**
   * One of `positions` where no whole record starts within the bytes written for its chunk, or
   * undefined when a record starts at each. The positions are taken chunk by chunk, and each chunk
   * is walked record by record once, marking where records start (records are only appended, so
   * every one lies on that walk): in the order of the id table's slots, ten million reports'
   * records took 2 s of cache misses; looked at chunk by chunk, 0.75 s; walked, 0.55 s.
   */
  firstNotHeld(positions: Uint32Array): number | undefined {
    const chunkOf = (at: number) => Math.floor(at / CHUNK_STRIDE);
    // The positions grouped by chunk (a counting sort on the chunk alone).
    const starts = new Uint32Array(MAX_CHUNKS + 1);
    for (const at of positions) {
      const chunkIndex = chunkOf(at);
      if (chunkIndex >= this.chunks.length) return at;
      starts[chunkIndex + 1] = (starts[chunkIndex + 1] as number) + 1;
    }
    for (let i = 1; i <= MAX_CHUNKS; i += 1) starts[i] = (starts[i] as number) + (starts[i - 1] as number);
    const grouped = new Uint32Array(positions.length);
    const next = starts.slice();
    for (const at of positions) {
      const chunkIndex = chunkOf(at);
      grouped[next[chunkIndex] as number] = at;
      next[chunkIndex] = (next[chunkIndex] as number) + 1;
    }
    let recordStarts = new Uint8Array(0);
    for (let chunkIndex = 0; chunkIndex < this.chunks.length; chunkIndex += 1) {
      const first = starts[chunkIndex] as number;
      const end = starts[chunkIndex + 1] as number;
      if (first === end) continue;
      const chunk = this.chunks[chunkIndex] as Buffer;
      const used = this.loadedBytes?.[chunkIndex] ?? chunk.length;
      // A bit for each byte where a record starts, walking the chunk's records from its first.
      const bytes = Math.ceil(used / 8);
      if (recordStarts.length < bytes) recordStarts = new Uint8Array(Math.max(bytes, CHUNK_BYTES / 8));
      else recordStarts.fill(0, 0, bytes);
      for (
        let record = 0, next = recordEnd(chunk, 0, used);
        next >= 0;
        record = next, next = recordEnd(chunk, next, used)
      )
        recordStarts[record >>> 3] = (recordStarts[record >>> 3] as number) | (1 << (record & 7));
      const base = chunkIndex * CHUNK_STRIDE;
      for (let i = first; i < end; i += 1) {
        const position = (grouped[i] as number) - base;
        if (position >= used || ((recordStarts[position >>> 3] as number) & (1 << (position & 7))) === 0)
          return grouped[i];
      }
    }
    return undefined;
  }

  /** The content at `at` of a report at `version` (a sealed record's basis is derived from it). */
  read(at: number, version: number): ReportContent {
    const { chunk, position } = this.locate(at);
    return readRecord(chunk, position, version);
  }

  /** Appends the record of `report`; its position. */
  write(report: ReportContent): number {
    const bytes = recordLength(report);
    const { chunk, position, at } = this.reserve(bytes);
    writeRecord(chunk, position, report);
    this.usedBytes += bytes;
    return at;
  }

  /** The record at `at` is no longer live: its bytes are a hole. */
  release(at: number): void {
    const { chunk, position } = this.locate(at);
    const bytes = storedLength(chunk, position);
    this.usedBytes -= bytes;
    this.garbageBytes += bytes;
  }

  private reserve(bytes: number): { chunk: Buffer; position: number; at: number } {
    if (this.fill + bytes > CHUNK_BYTES || this.chunks.length === 0) {
      // Positions are 32-bit in the id table: 512 chunks (2 GiB of names and tags) at most.
      if (this.chunks.length >= MAX_CHUNKS) throw new RangeError(FULL);
      // A record larger than a chunk gets a chunk of its own, full at once (fill = its length: a snapshot
      // writes it all; the tag of a 4 MiB report came back with its last bytes zeroed); the next record starts a new one.
      // Zeroed, so two tables with the same records hold equal bytes (and no stale memory).
      this.chunks.push(Buffer.alloc(Math.max(CHUNK_BYTES, bytes)));
      this.fill = bytes > CHUNK_BYTES ? bytes : 0;
      const chunkIndex = this.chunks.length - 1;
      if (bytes > CHUNK_BYTES)
        return { chunk: this.chunks[chunkIndex] as Buffer, position: 0, at: chunkIndex * CHUNK_STRIDE };
    }
    const chunkIndex = this.chunks.length - 1;
    const position = this.fill;
    this.fill += bytes;
    return { chunk: this.chunks[chunkIndex] as Buffer, position, at: chunkIndex * CHUNK_STRIDE + position };
  }

  /**
   * Copies the live records together into new chunks. `moveAll` is handed the function that moves
   * one record (its old position in, its new one out) and calls it for every live record.
   */
  compact(moveAll: (move: (at: number) => number) => void): void {
    const old = this.chunks;
    this.chunks = [];
    this.fill = CHUNK_BYTES;
    this.usedBytes = 0;
    this.garbageBytes = 0;
    moveAll((at) => {
      const chunkIndex = Math.floor(at / CHUNK_STRIDE);
      const chunk = old[chunkIndex] as Buffer;
      const position = at - chunkIndex * CHUNK_STRIDE;
      const bytes = storedLength(chunk, position);
      const target = this.reserve(bytes);
      chunk.copy(target.chunk, target.position, position, position + bytes);
      this.usedBytes += bytes;
      return target.at;
    });
  }

  /**
   * Appends `other`'s chunks as they are (`other` is not to be used after); returns what to add
   * to the positions of its records.
   */
  append(other: RecordArena): number {
    const base = this.chunks.length;
    if (base + other.chunks.length > MAX_CHUNKS) throw new RangeError(FULL);
    this.chunks.push(...other.chunks);
    // New records go on in other's last chunk; the room left in this arena's last one stays unused.
    if (other.chunks.length > 0) this.fill = other.fill;
    this.usedBytes += other.usedBytes;
    this.garbageBytes += other.garbageBytes;
    return base * CHUNK_STRIDE;
  }

  /** What the arena holds, for another thread: the chunks' buffers move with the message. */
  parts(): RecordArenaParts {
    return {
      chunks: this.chunks.map((chunk) => chunk.buffer as ArrayBuffer),
      fill: this.fill,
      usedBytes: this.usedBytes,
      garbageBytes: this.garbageBytes,
    };
  }

  /** The arena another thread's `parts()` described (this process built it: not checked again). */
  static fromParts(parts: RecordArenaParts): RecordArena {
    const arena = new RecordArena();
    arena.chunks = parts.chunks.map((buffer) => Buffer.from(buffer));
    arena.fill = parts.fill;
    arena.usedBytes = parts.usedBytes;
    arena.garbageBytes = parts.garbageBytes;
    return arena;
  }

  /** u32 chunk count; per chunk u32 length, u32 bytes used and those bytes; f64 fill, used and garbage bytes. */
  writeTo(out: BytesOut): void {
    out.u32(this.chunks.length);
    this.chunks.forEach((chunk, i) => {
      // The last chunk only as far as it is filled; it gets its room back when read.
      const used = i === this.chunks.length - 1 ? Math.min(this.fill, chunk.length) : chunk.length;
      out.u32(chunk.length);
      out.u32(used);
      // Records are only ever appended and a chunk's written bytes never change (a release leaves
      // them, a compaction writes new chunks): the encoding may hold them as they are.
      out.unchanging(chunk.subarray(0, used));
    });
    out.f64(this.fill);
    out.f64(this.usedBytes);
    out.f64(this.garbageBytes);
  }

  /** Reads what writeTo wrote; RangeError on data that does not hold an arena. */
  static readFrom(input: BytesReader): RecordArena {
    const arena = new RecordArena();
    arena.loadedBytes = [];
    const chunks = input.u32();
    if (chunks > MAX_CHUNKS) throw new RangeError(`an arena of ${chunks} chunks`);
    for (let i = 0; i < chunks; i += 1) {
      const length = input.u32();
      const used = input.u32();
      arena.loadedBytes.push(used);
      // Every chunk but the last is written whole, and only a chunk of one large record is larger
      // than CHUNK_BYTES (and full): nothing larger than the data left, or than one chunk besides,
      // is allocated for lengths read from the file, whose checksum may not be known yet.
      const partly = used !== length;
      if (used > length || used > input.remaining || (partly && (i < chunks - 1 || length > CHUNK_BYTES)))
        throw new RangeError(`a chunk of ${length} bytes with ${used} used`);
      // Read into its own memory, with the room of a partly filled chunk back.
      const chunk = used === length ? Buffer.allocUnsafeSlow(length) : Buffer.alloc(length);
      input.into(chunk.subarray(0, used));
      arena.chunks.push(chunk);
    }
    arena.fill = input.f64();
    arena.usedBytes = input.f64();
    arena.garbageBytes = input.f64();
    // New records go at `fill` in the last chunk: anywhere else would write over live ones.
    const lastUsed = arena.loadedBytes[chunks - 1];
    if (
      (lastUsed === undefined ? arena.fill !== CHUNK_BYTES : arena.fill !== lastUsed) ||
      !Number.isSafeInteger(arena.usedBytes) ||
      !Number.isSafeInteger(arena.garbageBytes) ||
      arena.usedBytes < 0 ||
      arena.garbageBytes < 0
    )
      throw new RangeError(
        `an arena filled to ${arena.fill}, ${arena.usedBytes} bytes used, ${arena.garbageBytes} holes`,
      );
    return arena;
  }
}
