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
// A report deleted after the feed showed its content: if the frame may still be in the server's
// buffers (Node's, or the kernel's send queue: bytes the client has not acknowledged), the
// connection is reset at once, so nothing the server keeps holds the content after the delete's
// answer (docs/erasure.md). A frame the client has acknowledged is the client's, like every answer it was given.
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { cursorReached, type Cursor, type EventLog, type LogRecord } from '../log/event-log.js';
import type { CommitListener } from '../log/capabilities.js';
import type { LogKind } from '../log/positions.js';
import { endFrame, eventFrame, heartbeatFrame, resumeAfter, type FeedFormat } from './feed-frames.js';
import type { ShownLine } from './shown-line.js';
import { systemKernel, type FeedKernel, type KernelSendQueues } from './send-queue.js';

/** How often a feed the server ends looks whether the client has acknowledged its opened content. */
const RELEASE_POLL_MS = 100;

/** Where a feed's records come from: the projector's applied records, and the log for the history before them. */
export interface FeedSource {
  readonly log: Pick<EventLog, 'readBatches'>;
  /** The projected cursor now: every record before it has been applied (and handed to listeners added before it moved). */
  cursor(): Cursor;
  /** Hands `listener` every batch the projector applies from now on; returns the unsubscribe function. */
  onApplied(listener: CommitListener): () => void;
}

export interface FeedOptions {
  readonly source: FeedSource;
  /** The next offset of each partition to send (absent: from the partition's start). */
  readonly from: Cursor;
  readonly format: FeedFormat;
  readonly kind: LogKind;
  /** A record as sent (shown-line.ts). */
  readonly show: (record: LogRecord) => Promise<ShownLine>;
  readonly bufferBytes: number;
  readonly heartbeatMs: number;
  /** How long a client the server ends gets to take the last line before its connection is closed (default: heartbeatMs). */
  readonly endGraceMs?: number;
}

/** Why a feed ended: the client went away, the server ended it (cut off, shutting down). */
export type FeedEnd =
  { readonly by: 'client' } | { readonly by: 'server'; readonly reason: string; readonly after: string | null };

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
  /** Bytes handed to the client's stream so far (frames and heartbeats). */
  private written = 0;
  /** The largest frame written: how far past Node's buffer a frame may begin. */
  private largestFrame = 0;
  /** For each key that opened a frame lately: `written` right after that frame (newest last). */
  private readonly openedAt = new Map<string, number>();
  /** `written` right after the newest opened frame (0: none). */
  private newestOpened = 0;
  /** Every byte up to here has been acknowledged by the client's TCP (as the kernel last said). */
  private ackedThrough = 0;
  /** While a record is being shown and written: the keys destroyed meanwhile. */
  private erasedWhileShowing: Set<string> | undefined;
  /** The connection (kept: a response lets go of it once it ends, and it may still hold frames). */
  private readonly socket: Socket | undefined;
  private releasedNow: () => void = () => undefined;
  /** Resolves once the connection holds none of this feed's opened content (closed, reset, or all acknowledged). */
  readonly released: Promise<void>;

  constructor(
    private readonly out: Writable,
    private readonly options: FeedOptions,
    private readonly kernel: FeedKernel = systemKernel(),
  ) {
    this.next = new Map(options.from);
    this.socket = (out as Writable & { socket?: Socket | null }).socket ?? undefined;
    this.released = new Promise((resolve) => {
      this.releasedNow = resolve;
    });
    (this.socket ?? out).once('close', () => this.releasedNow());
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
    for (const key of keys) this.erasedWhileShowing?.add(key);
    if (this.openedAt.size === 0 || this.gone()) return;
    for (const key of keys) {
      const at = this.openedAt.get(key);
      if (at === undefined) continue;
      if (this.mayStillHold(at, queues)) {
        this.reset();
        return;
      }
      this.openedAt.delete(key);
    }
  }

  private gone(): boolean {
    return this.socket === undefined ? this.out.destroyed : this.socket.destroyed;
  }

  /** Whether the frame that ended at `at` may still be in Node's buffers or the kernel's send queue. */
  private mayStillHold(at: number, queues: KernelSendQueues): boolean {
    if (at <= this.ackedThrough) return false;
    const since = this.written - at;
    // Node's buffer: the response's (with the socket's) while it has one, the socket's after.
    const inNode = Math.max(this.out.writableLength, this.socket?.writableLength ?? 0);
    if (since >= inNode + this.kernel.most + this.largestFrame) return false;
    const { localPort, remotePort } = this.socket ?? {};
    const inKernel =
      localPort === undefined || remotePort === undefined ? undefined : queues.queued({ localPort, remotePort });
    if (inKernel === undefined) return true;
    this.ackedThrough = Math.max(this.ackedThrough, this.written - inNode - inKernel);
    return since < inNode + inKernel;
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
    try {
      if (this.socket) this.socket.resetAndDestroy();
      else this.out.destroy();
    } catch {
      // Not a TCP handle (a TLS socket, a test's stream): destroyed all the same.
      this.socket?.destroy();
      this.out.destroy();
    }
    this.releasedNow();
  }

  /** Writes to the client, counting the bytes; false when it should wait for 'drain'. */
  private write(frame: string): boolean {
    const bytes = Buffer.byteLength(frame);
    this.written += bytes;
    this.largestFrame = Math.max(this.largestFrame, bytes);
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
    this.erasedWhileShowing = new Set();
    let flowing: boolean;
    try {
      let shown = await this.options.show(record);
      // Opened with a key destroyed meanwhile: shown again (without it, since the store forgot it).
      while (shown.opened !== undefined && this.erasedWhileShowing.has(shown.opened))
        shown = await this.options.show(record);
      if (this.stop.signal.aborted) return;
      this.next.set(partition, offset + 1);
      this.takenThisRound += record.value.length;
      const after = this.options.format === 'sse' ? (this.after() ?? '') : '';
      flowing = this.write(eventFrame(this.options.format, shown.text, after));
      if (shown.opened !== undefined) this.rememberOpened(shown.opened);
    } finally {
      this.erasedWhileShowing = undefined;
    }
    if (flowing) return;
    this.waitingForClient = true;
    await this.drained();
    this.waitingForClient = false;
    this.stalledTicks = 0;
  }

  private rememberOpened(key: string): void {
    // Newest last (Map keeps insertion order): entries further back than any buffer reaches are the client's.
    this.openedAt.delete(key);
    this.openedAt.set(key, this.written);
    this.newestOpened = this.written;
    const reach = this.kernel.most + this.out.writableHighWaterMark + 2 * this.largestFrame;
    for (const [oldest, at] of this.openedAt) {
      if (this.written - at <= reach) break;
      this.openedAt.delete(oldest);
    }
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
    if (this.ended) return;
    if (this.waitingForClient) {
      this.stalledTicks += 1;
      if (this.stalledTicks >= 2) this.end(`the client took nothing for ${2 * this.options.heartbeatMs} ms`);
      return;
    }
    this.write(heartbeatFrame(this.options.format));
  }

  /**
   * The last line, then the end of the response once the client's TCP has acknowledged every frame
   * that opened content (so that a graceful close never leaves one in a kernel queue no delete can
   * reach); a client that does not within the grace is reset, dropping what is queued.
   */
  private close(ended: { reason: string; after: string | null }): void {
    const { out } = this;
    if (out.destroyed || out.writableEnded) {
      this.releasedNow();
      return;
    }
    const until = performance.now() + (this.options.endGraceMs ?? this.options.heartbeatMs);
    this.write(endFrame(this.options.format, ended.reason, ended.after));
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      timer = undefined;
      if (this.gone()) return;
      if (this.newestOpened === 0 || !this.mayStillHold(this.newestOpened, this.kernel.sendQueues())) {
        this.releasedNow();
        out.end();
        // A client that never takes the end of the response is reset at the grace's end all the same.
        timer = setTimeout(() => this.reset(), Math.max(0, until - performance.now()));
        return;
      }
      if (performance.now() >= until) this.reset();
      else timer = setTimeout(settle, RELEASE_POLL_MS);
    };
    (this.socket ?? out).once('close', () => clearTimeout(timer));
    out.once('close', () => clearTimeout(timer));
    settle();
  }
}
