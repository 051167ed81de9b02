// One client's feed (GET /events): the history from its position up to what the projector has
// applied, read from the log, then every record the projector applies from then on, handed over
// as applied (Projector.onRecordsApplied). One source serves every feed: on Kafka the projector
// already follows the whole topic, so a feed sees every instance's writes without a fetch loop of
// its own, and the log is read only to catch up.
//
// A client never holds anyone up: the projector hands a feed its records by pushing them on the
// feed's queue (nothing else happens in its step), and the feed writes to its socket only as fast
// as the client reads. A feed whose queue grows past its bound is cut off, with a last line saying
// where to resume, unless it is still catching up and took at least a buffer's worth meanwhile
// (a fast client reading a long history): then the queue is dropped and the feed reads the log
// again from where it is. A client that takes nothing for two heartbeat intervals is cut off too.
//
// A report deleted while a frame that showed its content may still be in the server's buffers
// (Node's, or the kernel's send queue: not acknowledged by the client) resets the connection
// (docs/erasure.md); what the client's TCP acknowledged is its own, like every answer it was given.
import type { Writable } from 'node:stream';
import { cursorReached, type Cursor, type LogRecord } from '../log/event-log.js';
import { endFrame, eventFrame, heartbeatFrame, resumeAfter } from './feed-frames.js';
import { TOKEN_WITHDRAWN, type FeedEnd, type FeedOptions } from './feed-options.js';
import { FeedConnection } from './feed-connection.js';
import { OpenedFrames } from './opened-frames.js';
import { systemKernel, type FeedKernel, type KernelSendQueues } from './send-queue.js';

export class Feed {
  private readonly next: Map<number, number>;
  private queue: LogRecord[] = [];
  private queuedBytes = 0;
  /** The queue overflowed; in catch-up the feed reads the log again, live it is cut off. */
  private overflowed = false;
  /** Bytes of records the client took since the current round started (a read of the log, then live). */
  private takenThisRound = 0;
  private live = false;
  private waitingForClient = false;
  /** Heartbeat ticks the client has taken nothing for while a write waited on it. */
  private stalledTicks = 0;
  private ended: FeedEnd | undefined;
  private readonly stop = new AbortController();
  private wake: () => void = () => undefined;
  /** Ends a wait for the client (an overflow cuts it short). */
  private interrupt: () => void = () => undefined;
  private unsubscribe: () => void = () => undefined;
  /** The frames that opened content, and what the client has acknowledged. */
  private readonly opened: OpenedFrames;
  /** While a record is being shown and written. */
  private showing = false;
  /** The keys destroyed while a record was being shown and written (none: undefined). */
  private erasedWhileShowing: Set<string> | undefined;
  /** The client's connection, as erasure sees it. */
  private readonly connection: FeedConnection;
  /** Resolves once the connection holds none of this feed's opened content (closed, reset, or all acknowledged). */
  readonly released: Promise<void>;

  constructor(
    private readonly out: Writable,
    private readonly options: FeedOptions,
    private readonly kernel: FeedKernel = systemKernel(),
  ) {
    this.next = new Map(options.from);
    this.opened = new OpenedFrames(kernel.most);
    this.connection = new FeedConnection(out);
    this.released = this.connection.released;
  }

  /** Where the client resumes now (`?after=`). */
  after(): string | null {
    return resumeAfter(this.next, this.options.kind);
  }

  /** Ends the feed from the server's side: a last line with `reason` and where to resume, then the connection. */
  end(reason: string): void {
    if (this.ended) return;
    this.ended = { by: 'server', reason, after: this.after() };
    this.stop.abort();
    this.wake();
  }

  /**
   * Keys destroyed (`keys`: key id texts): a frame this feed showed opened with one of them that
   * may still be in the server's buffers (fewer bytes written since its end than Node and the
   * kernel still hold) resets the connection, dropping whatever is queued.
   */
  erased(keys: ReadonlySet<string>, queues: KernelSendQueues): void {
    if (this.showing) for (const key of keys) (this.erasedWhileShowing ??= new Set()).add(key);
    if (!this.connection.gone() && this.opened.holdAny(keys, this.connection.held(queues))) this.reset();
  }

  /** Ends the feed with nothing more sent, and drops what Node and the kernel still hold for the client. */
  private reset(): void {
    if (!this.ended)
      this.ended = {
        by: 'server',
        reason: 'a report whose content it had not yet delivered was deleted',
        after: this.after(),
      };
    this.stop.abort();
    this.wake();
    this.connection.reset();
  }

  /** Writes to the client, counting the bytes; false when it should wait for 'drain'. */
  private write(frame: string, openedBy?: string): boolean {
    this.opened.wrote(Buffer.byteLength(frame), openedBy, this.out.writableHighWaterMark);
    return this.out.write(frame);
  }

  /** Runs the feed until the client goes away or the server ends it. Never rejects for the client's sake. */
  async run(): Promise<FeedEnd> {
    const { out, options } = this;
    const gone = () => {
      if (!this.ended) this.ended = { by: 'client' };
      this.stop.abort();
      this.wake();
    };
    out.once('close', gone);
    out.once('error', gone);
    const heartbeat = setInterval(() => this.beat(), options.heartbeatMs);
    try {
      while (!this.stop.signal.aborted) {
        await this.round();
        if (this.overflowed && !this.stop.signal.aborted) {
          // A client that took less than a buffer while the writes filled one reads slower than they come.
          if (this.live || this.takenThisRound < options.bufferBytes)
            this.end(`the client read too slowly: more than ${options.bufferBytes} bytes of events waited for it`);
        }
      }
    } catch (error) {
      if (!this.stop.signal.aborted) this.end(`the feed failed: ${(error as Error).message}`);
    } finally {
      clearInterval(heartbeat);
      this.unsubscribe();
      this.queue = [];
      out.off('close', gone);
      out.off('error', gone);
    }
    const ended = this.ended ?? { by: 'client' };
    if (ended.by === 'server') this.close(ended);
    return ended;
  }

  /** One round: subscribe, read the log up to the projected cursor of that moment, then the handed-over records. */
  private async round(): Promise<void> {
    const { source } = this.options;
    this.queue = [];
    this.queuedBytes = 0;
    this.overflowed = false;
    this.takenThisRound = 0;
    this.live = false;
    // Subscribed before the cursor is read, in one step: every record at or past `target` is handed over.
    this.unsubscribe = source.onApplied((records) => this.take(records));
    const target = new Map(source.cursor());
    try {
      if (!cursorReached(this.next, target)) await this.readHistory(target);
      if (this.overflowed || this.stop.signal.aborted) return;
      this.live = true;
      while (!this.stop.signal.aborted && !this.overflowed) {
        if (this.queue.length === 0) {
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
          continue;
        }
        const records = this.queue;
        this.queue = [];
        this.queuedBytes = 0;
        for (const record of records) {
          if (this.stop.signal.aborted || this.overflowed) return;
          await this.send(record);
        }
      }
    } finally {
      this.unsubscribe();
      this.unsubscribe = () => undefined;
    }
  }

  private async readHistory(target: Cursor): Promise<void> {
    // A partition the client is already past (an `after` beyond the head) is read from the target:
    // nothing of it is sent before it, and no log is asked for an offset it does not hold yet.
    const from = new Map(this.next);
    for (const [partition, offset] of target) if ((from.get(partition) ?? 0) > offset) from.set(partition, offset);
    for await (const batch of this.options.source.log.readBatches(from, { signal: this.stop.signal })) {
      for (const record of batch) {
        const { partition, offset } = record.position;
        if (offset >= (target.get(partition) ?? 0)) continue; // handed over
        if (this.stop.signal.aborted || this.overflowed) return;
        await this.send(record);
      }
      if (cursorReached(this.next, target)) return;
    }
  }

  /** The projector's hand-over: queued only (this runs in the projector's step). */
  private take(records: readonly LogRecord[]): void {
    if (this.overflowed || this.ended) return;
    for (const record of records) {
      if (record.position.offset < (this.next.get(record.position.partition) ?? 0)) continue;
      this.queue.push(record);
      this.queuedBytes += record.value.length;
    }
    if (this.queuedBytes > this.options.bufferBytes) {
      this.overflowed = true;
      this.queue = [];
      this.queuedBytes = 0;
      this.unsubscribe();
      this.interrupt();
    }
    this.wake();
  }

  private async send(record: LogRecord): Promise<void> {
    const { partition, offset } = record.position;
    if (offset < (this.next.get(partition) ?? 0)) return;
    // Keys destroyed from the moment the record is opened until its frame is written (and remembered).
    this.showing = true;
    let flowing: boolean;
    try {
      let shown = await this.options.show(record);
      // Opened with a key destroyed meanwhile: shown again (without it, since the store forgot it).
      while (shown.opened !== undefined && this.erasedWhileShowing?.has(shown.opened) === true)
        shown = await this.options.show(record);
      if (this.stop.signal.aborted || !this.stillAllowed()) return;
      this.next.set(partition, offset + 1);
      this.takenThisRound += record.value.length;
      const after = this.options.format === 'sse' ? (this.after() ?? '') : '';
      flowing = this.write(eventFrame(this.options.format, shown.text, after), shown.opened);
    } finally {
      this.showing = false;
      this.erasedWhileShowing = undefined;
    }
    if (flowing) return;
    this.waitingForClient = true;
    await this.drained();
    this.waitingForClient = false;
    this.stalledTicks = 0;
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.out.off('drain', done);
        this.stop.signal.removeEventListener('abort', done);
        this.interrupt = () => undefined;
        resolve();
      };
      this.interrupt = done;
      this.out.on('drain', done);
      this.stop.signal.addEventListener('abort', done);
    });
  }

  private beat(): void {
    if (this.ended || !this.stillAllowed()) return;
    if (this.waitingForClient) {
      this.stalledTicks += 1;
      if (this.stalledTicks >= 2) this.end(`the client took nothing for ${2 * this.options.heartbeatMs} ms`);
      return;
    }
    this.write(heartbeatFrame(this.options.format));
  }

  /** False, with the feed ended, once its token no longer grants read. */
  private stillAllowed(): boolean {
    if (this.options.allowed === undefined || this.options.allowed()) return true;
    this.end(TOKEN_WITHDRAWN);
    return false;
  }

  /** The last line, then the end of the response once the client has taken what opened content (feed-connection.ts). */
  private close(ended: { reason: string; after: string | null }): void {
    if (!this.out.destroyed && !this.out.writableEnded)
      this.write(endFrame(this.options.format, ended.reason, ended.after));
    this.connection.endOnceTaken(
      () => this.opened.holdNewest(this.connection.held(this.kernel.sendQueues())),
      this.options.endGraceMs ?? this.options.heartbeatMs,
    );
  }
}
