// The feeds open now: at most REPORTS_MAX_FEEDS at once (one more is answered 503 before anything
// is read), each ended with a last line when the server shuts down.
import type { Writable } from 'node:stream';
import { UnavailableError } from '../errors.js';
import { keyIdText, type KeyId } from '../keys/key-store.js';
import { Feed } from './feed.js';
import type { FeedEnd, FeedOptions } from './feed-options.js';
import { systemKernel, type FeedKernel } from './send-queue.js';

export class FeedHub {
  private readonly feeds = new Set<Feed>();
  /** Feeds that ended whose connection may still hold content they opened. */
  private readonly ending = new Set<Feed>();
  private closing = false;

  constructor(
    private readonly maxFeeds: number,
    /** The kernel's send queues (tests pass their own). */
    private readonly kernel: FeedKernel = systemKernel(),
  ) {}

  get open(): number {
    return this.feeds.size;
  }

  /** Throws 503 when no feed may be opened now; call before anything is written to the client. */
  admit(): void {
    if (this.closing) throw new UnavailableError('the server is shutting down');
    if (this.feeds.size >= this.maxFeeds)
      throw new UnavailableError(
        `${this.maxFeeds} feeds are open, the most this server serves at once (REPORTS_MAX_FEEDS); retry shortly`,
        5,
      );
  }

  /** Runs a feed to its end, counted among the open ones meanwhile. */
  async run(out: Writable, options: FeedOptions): Promise<FeedEnd> {
    this.admit();
    const feed = new Feed(out, options, this.kernel);
    this.feeds.add(feed);
    try {
      return await feed.run();
    } finally {
      this.feeds.delete(feed);
      // Ended, but its connection may still hold opened content a delete must reach: kept until it does not.
      this.ending.add(feed);
      void feed.released.then(() => this.ending.delete(feed));
    }
  }

  /** Keys destroyed: every feed that may still hold content one of them opened is reset (feed.ts). */
  erased(ids: readonly KeyId[]): void {
    if (this.feeds.size + this.ending.size === 0 || ids.length === 0) return;
    const keys = new Set(ids.map(keyIdText));
    const queues = this.kernel.sendQueues();
    for (const feed of [...this.feeds, ...this.ending]) feed.erased(keys, queues);
  }

  /** Ends every feed (each with a last line saying where to resume) and admits no more. */
  close(): void {
    this.closing = true;
    for (const feed of this.feeds) feed.end('the server is shutting down');
  }
}
