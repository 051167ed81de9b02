// The connection a feed writes to, as erasure sees it (feed.ts): what Node and the kernel still
// hold for the client, a reset that drops all of it, and the moment none of the feed's opened
// content can be in it any more (`released`).
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { HeldBytes } from './opened-frames.js';
import type { KernelSendQueues } from './send-queue.js';

/** How often a feed the server ends looks whether the client has acknowledged its opened content. */
const RELEASE_POLL_MS = 100;

export class FeedConnection {
  /** Kept: a response lets go of its socket once it ends, and the socket may still hold frames. */
  private readonly socket: Socket | undefined;
  private releasedNow: () => void = () => undefined;
  /** Resolves once the connection holds none of the feed's opened content (closed, reset, or all acknowledged). */
  readonly released: Promise<void>;

  constructor(private readonly out: Writable) {
    this.socket = (out as Writable & { socket?: Socket | null }).socket ?? undefined;
    this.released = new Promise((resolve) => {
      this.releasedNow = resolve;
    });
    (this.socket ?? out).once('close', () => this.releasedNow());
  }

  gone(): boolean {
    return this.socket === undefined ? this.out.destroyed : this.socket.destroyed;
  }

  /** Node's buffer now (the response's, with the socket's, while it has one; the socket's after), and the kernel's send queue. */
  held(queues: KernelSendQueues): HeldBytes {
    const { localPort, remotePort } = this.socket ?? {};
    return {
      inNode: Math.max(this.out.writableLength, this.socket?.writableLength ?? 0),
      inKernel: () =>
        localPort === undefined || remotePort === undefined ? undefined : queues.queued({ localPort, remotePort }),
    };
  }

  /** Drops what Node and the kernel still hold for the client, and the connection. */
  reset(): void {
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

  /**
   * Ends the response (its last line written) once `holdsOpened` says no opened content can still
   * be in the connection, so that a graceful close never leaves one in a kernel queue no delete can
   * reach; a client that has not taken it (or the end) within `graceMs` is reset.
   */
  endOnceTaken(holdsOpened: () => boolean, graceMs: number): void {
    const { out } = this;
    if (out.destroyed || out.writableEnded) {
      this.releasedNow();
      return;
    }
    const until = performance.now() + graceMs;
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      timer = undefined;
      if (this.gone()) return;
      if (!holdsOpened()) {
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
