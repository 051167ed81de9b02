// Turns at sending, shared by a server's feeds: one feed sends at a time, for SLICE_MS at most, then
// the turn passes to the next feed waiting in a later turn of the event loop, so the requests whose
// input arrived meanwhile are handled between two slices. Sending is opening a record (its content
// decrypted, its line built: most of a feed's work) and writing it. A feed gives its turn up while
// it waits (for its client to read, for records to come, for the log's next batch, and for a key
// read that did not answer within the turn of the event loop). Without it, a feed catching up sent as long as its
// socket took writes (megabytes on loopback), and a hundred feeds whose clients read nothing, each
// sending in turn, left other requests one event-loop turn in a hundred: seconds for a /healthz.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a feed sends before its turn passes to the next one waiting. */
export const SLICE_MS = 2;

export class FeedTurns {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  /** Resolves once the caller holds the turn. */
  take(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Gives the turn up: to the next feed waiting, or to the first that asks, in a later turn of the
   * event loop. Until then it stays taken: were it free at once, feeds whose reads completed in the
   * same turn would each take it in that turn, and a hundred of them held it for 100 ms.
   */
  pass(): void {
    setImmediate(() => {
      const next = this.waiting.shift();
      if (next === undefined) this.held = false;
      else next();
    });
  }
}

/** One feed's hold on the turns. */
export class FeedTurn {
  private holding = false;
  private sliceStartMs = 0;
  /** Settles at the event loop's next turn after the turn was taken: work still pending then waits on I/O. */
  private tick: Promise<void> = Promise.resolve();

  constructor(private readonly turns: FeedTurns) {}

  /** Resolves once this feed may send: at once within its slice; after the others waiting once it is spent. */
  async take(): Promise<void> {
    if (this.holding) {
      if (performance.now() - this.sliceStartMs < SLICE_MS) return;
      this.release();
      // Even with no one waiting: the event loop gets its turn between two slices.
      await nextTurn();
    }
    await this.turns.take();
    this.holding = true;
    this.sliceStartMs = performance.now();
    this.tick = nextTurn();
  }

  /**
   * `work`'s result, the turn held meanwhile unless `work` still waits once the event loop had a
   * turn (a key read from the disk or a broker): then it goes to the others until `work` is done.
   */
  async hold<T>(work: Promise<T>): Promise<T> {
    const done = await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      this.tick.then(() => false),
    ]);
    if (done) return work;
    this.release();
    try {
      return await work;
    } finally {
      await this.take();
    }
  }

  /** Gives the turn up (before a wait). */
  release(): void {
    if (!this.holding) return;
    this.holding = false;
    this.turns.pass();
  }
}
