// A snapshot file read as it is parsed: small fields through a window of 1 MiB, the report table's
// chunks and segments straight from the file into the arrays that keep them (BytesReader.into). A
// start reads the file once, into the model's own memory; it never holds the whole file besides
// the model (a 846 MB snapshot was read whole, then copied piece by piece).
import { readSync } from 'node:fs';
import { BufferReader } from '../read-model/bytes.js';

const WINDOW_BYTES = 1 << 20;

/** Reads `length` bytes at `position` of the file `fd` into `target` from `offset`; RangeError when the file ends first. */
export function readFully(fd: number, target: Uint8Array, offset: number, length: number, position: number): void {
  for (let done = 0; done < length;) {
    const read = readSync(fd, target, offset + done, length - done, position + done);
    if (read === 0) throw new RangeError(`the file ends at byte ${position + done}, ${length - done} more were wanted`);
    done += read;
  }
}

export class FileBytesIn extends BufferReader {
  private window = Buffer.allocUnsafe(WINDOW_BYTES);
  /** File offsets of the window's first byte and of the byte after its last. */
  private windowStart: number;
  private windowEnd: number;
  /** The next byte to parse, as a file offset. */
  private position: number;

  /** The bytes of the open file `fd` from `start` to `end` (exclusive). */
  constructor(
    private readonly fd: number,
    start: number,
    private readonly end: number,
  ) {
    super();
    this.position = start;
    this.windowStart = start;
    this.windowEnd = start;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  get done(): boolean {
    return this.position === this.end;
  }

  into(target: Uint8Array): void {
    this.check(target.length);
    const buffered = Math.min(target.length, this.windowEnd - this.position);
    const at = this.position - this.windowStart;
    target.set(this.window.subarray(at, at + buffered));
    readFully(this.fd, target, buffered, target.length - buffered, this.position + buffered);
    this.position += target.length;
    if (this.position > this.windowEnd) {
      this.windowStart = this.position;
      this.windowEnd = this.position;
    }
  }

  private check(bytes: number): void {
    if (bytes < 0 || bytes > this.remaining)
      throw new RangeError(`the data ends at byte ${this.end}, ${bytes} bytes were wanted at ${this.position}`);
  }

  protected get current(): Buffer {
    return this.window;
  }

  /** The window offset of the next `bytes` bytes, read in when they are not all in the window yet. */
  protected take(bytes: number): number {
    this.check(bytes);
    if (this.position + bytes > this.windowEnd) this.refill(bytes);
    const at = this.position - this.windowStart;
    this.position += bytes;
    return at;
  }

  /** Moves what is left unread to the window's start and reads after it, at least `bytes` in all. */
  private refill(bytes: number): void {
    const kept = this.windowEnd - this.position;
    const window = bytes > this.window.length ? Buffer.allocUnsafe(bytes) : this.window;
    this.window.copy(window, 0, this.position - this.windowStart, this.windowEnd - this.windowStart);
    this.window = window;
    this.windowStart = this.position;
    const wanted = Math.min(window.length - kept, this.end - (this.position + kept));
    readFully(this.fd, window, kept, wanted, this.position + kept);
    this.windowEnd = this.position + kept + wanted;
  }
}
