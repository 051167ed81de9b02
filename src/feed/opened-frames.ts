// The frames a feed sent with content opened, by the key that opened them, and how much of what it
// wrote the client's TCP has acknowledged: what a delete must still reach (feed.ts `erased`). A
// frame is placed by the bytes written up to its end; the bytes written after it, against what
// Node's buffer and the kernel's send queue still hold, say whether it may still be in them.

/** Bytes still held for the client: Node's buffer now, and the kernel's send queue when asked (undefined: it cannot tell). */
export interface HeldBytes {
  readonly inNode: number;
  inKernel(): number | undefined;
}

export class OpenedFrames {
  /** Bytes written to the client so far (frames and heartbeats). */
  private written = 0;
  /** The largest frame written: how far past Node's buffer a frame may begin. */
  private largestFrame = 0;
  /** For each key that opened a frame lately: `written` right after that frame (newest last). */
  private readonly ends = new Map<string, number>();
  /** `written` right after the newest opened frame (0: none). */
  private newest = 0;
  /** Every byte up to here has been acknowledged by the client's TCP (as the kernel last said). */
  private ackedThrough = 0;

  constructor(
    /** The most a connection's send queue holds (tcp_wmem's maximum). */
    private readonly mostInKernel: number,
  ) {}

  /** A frame of `bytes` was written; `key`, when it opened content. `highWaterMark`: Node's buffer's. */
  wrote(bytes: number, key?: string, highWaterMark = 0): void {
    this.written += bytes;
    this.largestFrame = Math.max(this.largestFrame, bytes);
    if (key === undefined) return;
    // Newest last (a Map keeps insertion order): entries further back than any buffer reaches are the client's.
    this.ends.delete(key);
    this.ends.set(key, this.written);
    this.newest = this.written;
    const reach = this.mostInKernel + highWaterMark + 2 * this.largestFrame;
    for (const [oldest, end] of this.ends) {
      if (this.written - end <= reach) break;
      this.ends.delete(oldest);
    }
  }

  /** Whether a frame opened with one of `keys` may still be held; those the client has are forgotten. */
  holdAny(keys: ReadonlySet<string>, held: HeldBytes): boolean {
    if (this.ends.size === 0) return false;
    for (const key of keys) {
      const end = this.ends.get(key);
      if (end === undefined) continue;
      if (this.mayHold(end, held)) return true;
      this.ends.delete(key);
    }
    return false;
  }

  /** Whether any frame that opened content may still be held. */
  holdNewest(held: HeldBytes): boolean {
    return this.newest > 0 && this.mayHold(this.newest, held);
  }

  private mayHold(end: number, held: HeldBytes): boolean {
    if (end <= this.ackedThrough) return false;
    const since = this.written - end;
    if (since >= held.inNode + this.mostInKernel + this.largestFrame) return false;
    const inKernel = held.inKernel();
    if (inKernel === undefined) return true;
    this.ackedThrough = Math.max(this.ackedThrough, this.written - held.inNode - inKernel);
    return since < held.inNode + inKernel;
  }
}
