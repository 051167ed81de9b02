// A copy of an id index's slots as they were at one moment, made a slice at a time while the index
// goes on changing (copy on write). A snapshot of a million reports copied the 36 MB of slots at
// once and held the event loop for 27 ms, most of it the kernel handing out the copy's pages; now
// the snapshot copies a slice per turn, and the index calls `beforeWrite` before it changes a
// word: a block not copied yet is copied first, so the copy still gets the word as it was.

/** Words a block: 16 KiB, 1,024 slots. A write to a block not yet copied copies it (a few µs). */
const BLOCK_WORDS = 4096;
const EMPTY = new Uint32Array(0);

export class FrozenSlots {
  private readonly copy: Uint32Array;
  /** 1 for each block copied. */
  private readonly copied: Uint8Array;
  /** Blocks below this are copied; those above it may be too (a write copied them first). */
  private nextBlock = 0;
  private ended = false;

  /** `onEnd` is called once, when the copy is done or released. */
  constructor(
    private source: Uint32Array,
    private readonly onEnd: () => void,
  ) {
    this.copy = new Uint32Array(source.length);
    this.copied = new Uint8Array(Math.ceil(source.length / BLOCK_WORDS));
  }

  /** Whether every block is copied. */
  get done(): boolean {
    return this.nextBlock === this.copied.length;
  }

  /** To be called before `array[word]` changes: if `array` is the frozen one, the word's block is copied first. */
  beforeWrite(array: Uint32Array, word: number): void {
    if (array !== this.source) return;
    const block = Math.floor(word / BLOCK_WORDS);
    if (this.copied[block] === 0) this.copyBlock(block);
  }

  /** Copies at least `words` more words (fewer when that finishes the copy); whether the copy is done. */
  copySome(words: number): boolean {
    if (this.ended && !this.done) throw new Error('the frozen slots were released before they were all copied');
    let left = words;
    while (left > 0 && !this.done) {
      if (this.copied[this.nextBlock] === 0) {
        this.copyBlock(this.nextBlock);
        left -= BLOCK_WORDS;
      }
      this.nextBlock += 1;
    }
    if (this.done) this.release();
    return this.done;
  }

  /** Ends the copy's hold on writes (done, or given up: the snapshot failed) and lets the source go (a rehash may have replaced it). */
  release(): void {
    if (this.ended) return;
    this.ended = true;
    this.source = EMPTY;
    this.onEnd();
  }

  /** The slots as they were when frozen; only once every block is copied. */
  result(): Uint32Array {
    if (!this.done) throw new Error('the frozen slots are not all copied yet');
    return this.copy;
  }

  private copyBlock(block: number): void {
    const start = block * BLOCK_WORDS;
    this.copy.set(this.source.subarray(start, Math.min(start + BLOCK_WORDS, this.source.length)), start);
    this.copied[block] = 1;
  }
}
