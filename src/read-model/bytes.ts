// Little binary helpers for the snapshot format: a writer that fills fixed-size chunks and hands
// each full one on (so a large read model is written as a stream, never as one big buffer), and a
// reader over one buffer whose every read is bounds-checked (a malformed file throws RangeError).

const CHUNK_BYTES = 1024 * 1024;

export class BytesOut {
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Where the bytes not handed on yet begin, and where the next byte goes. */
  private start = 0;
  private fill = 0;

  constructor(private readonly onChunk: (bytes: Buffer) => void) {}

  /** Room for `bytes` more bytes: the buffer and the position to write them at. */
  reserve(bytes: number): { buffer: Buffer; at: number } {
    if (this.fill + bytes > this.chunk.length) {
      this.flush();
      this.chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
      this.start = 0;
      this.fill = 0;
    }
    const at = this.fill;
    this.fill += bytes;
    return { buffer: this.chunk, at };
  }

  u8(value: number): void {
    const { buffer, at } = this.reserve(1);
    buffer[at] = value;
  }

  u32(value: number): void {
    const { buffer, at } = this.reserve(4);
    buffer.writeUInt32LE(value, at);
  }

  f64(value: number): void {
    const { buffer, at } = this.reserve(8);
    buffer.writeDoubleLE(value, at);
  }

  bytes(source: Buffer, start = 0, end = source.length): void {
    const { buffer, at } = this.reserve(end - start);
    source.copy(buffer, at, start, end);
  }

  /**
   * Hands on `bytes` themselves, not a copy, after what is buffered: for bytes the caller never
   * changes again (the report table's filled records), so a snapshot of a large model takes them
   * as they are instead of copying tens of megabytes while the server waits.
   */
  unchanging(bytes: Buffer): void {
    this.flush();
    if (bytes.length > 0) this.onChunk(bytes);
  }

  /** A string as u32 byte length + UTF-8. */
  text(value: string): void {
    const length = Buffer.byteLength(value);
    this.u32(length);
    const { buffer, at } = this.reserve(length);
    buffer.write(value, at, 'utf8');
  }

  /**
   * Hands on what is buffered: a view of the buffer, not a copy. What follows goes after it in the
   * same buffer (never over it), so that a snapshot handing on many pieces in between (a few bytes
   * before each id table segment) does not keep a buffer of its own alive for each.
   */
  flush(): void {
    if (this.fill === this.start) return;
    this.onChunk(this.chunk.subarray(this.start, this.fill));
    this.start = this.fill;
  }
}

/**
 * What a reader of a snapshot's sections takes its bytes from: BytesIn (a buffer in memory) or a
 * file read as it is parsed (snapshot/file-bytes-in.ts). A view from `bytes` is valid until the
 * next read; what is kept is copied, or read straight into its own array with `into`.
 */
export interface BytesReader {
  u8(): number;
  u32(): number;
  f64(): number;
  /** A view of the next `bytes` bytes. */
  bytes(bytes: number): Buffer;
  text(): string;
  /** Fills `target` with the next bytes. */
  into(target: Uint8Array): void;
  /** Bytes left to read: what a length read from the data is checked against before anything is allocated. */
  readonly remaining: number;
  readonly done: boolean;
}

/** A BytesReader's reads, over the buffer where a subclass keeps the next bytes. */
export abstract class BufferReader implements BytesReader {
  /** The offset in `current` of the next `bytes` bytes, the position moved past them; RangeError beyond the data. */
  protected abstract take(bytes: number): number;
  /** The buffer of `take`'s offsets (asked after `take`, which may replace it). */
  protected abstract get current(): Buffer;
  abstract into(target: Uint8Array): void;
  abstract get remaining(): number;
  abstract get done(): boolean;

  u8(): number {
    const at = this.take(1);
    return this.current[at] as number;
  }

  u32(): number {
    const at = this.take(4);
    return this.current.readUInt32LE(at);
  }

  f64(): number {
    const at = this.take(8);
    return this.current.readDoubleLE(at);
  }

  bytes(bytes: number): Buffer {
    const at = this.take(bytes);
    return this.current.subarray(at, at + bytes);
  }

  text(): string {
    const length = this.u32();
    const at = this.take(length);
    return this.current.toString('utf8', at, at + length);
  }
}

export class BytesIn extends BufferReader {
  position = 0;

  constructor(readonly buffer: Buffer) {
    super();
  }

  protected get current(): Buffer {
    return this.buffer;
  }

  protected take(bytes: number): number {
    const at = this.position;
    if (bytes < 0 || at + bytes > this.buffer.length)
      throw new RangeError(`the data ends at byte ${this.buffer.length}, ${bytes} bytes were wanted at ${at}`);
    this.position = at + bytes;
    return at;
  }

  into(target: Uint8Array): void {
    target.set(this.bytes(target.length));
  }

  get remaining(): number {
    return this.buffer.length - this.position;
  }

  get done(): boolean {
    return this.position === this.buffer.length;
  }
}
