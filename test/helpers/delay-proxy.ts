// A TCP proxy on loopback in front of one broker port, that can delay what it forwards: this
// kernel has no netem, so a slow network is made here. Each chunk read from one side is written to
// the other after a delay drawn from mean ± jitter (uniform), never before a chunk read earlier, so
// the byte stream keeps its order. With no delay set it forwards at once. The brokers advertise the
// proxy's port, so clients and the other nodes' replication both go through it.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DelayProxy {
  readonly port: number;
  /** From now on every chunk waits mean ± jitter milliseconds (0, 0: none). */
  setDelay(meanMs: number, jitterMs: number): void;
  close(): Promise<void>;
}

export function startDelayProxy(port: number, targetPort: number): Promise<DelayProxy> {
  let meanMs = 0;
  let jitterMs = 0;
  const sockets = new Set<Socket>();
  const delay = () => Math.max(0, meanMs + (Math.random() * 2 - 1) * jitterMs);

  /**
   * Forwards `from` to `to`, each chunk after its delay and never before the one read before it:
   * one queue and one timer per direction (a timer per chunk could fire out of order, since Node
   * counts a timer from its loop's cached millisecond, and a reordered stream is a broken one).
   */
  const forward = (from: Socket, to: Socket) => {
    const queue: { dueMs: number; send: () => void }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      const nowMs = performance.now();
      while (queue.length > 0 && (queue[0]?.dueMs ?? 0) <= nowMs) queue.shift()?.send();
      const next = queue[0];
      if (next !== undefined) timer = setTimeout(flush, Math.max(1, next.dueMs - nowMs));
    };
    const later = (send: () => void) => {
      const nowMs = performance.now();
      const dueMs = Math.max(queue.at(-1)?.dueMs ?? 0, nowMs + delay());
      if (queue.length === 0 && dueMs <= nowMs) return send();
      queue.push({ dueMs, send });
      if (timer === undefined) timer = setTimeout(flush, Math.max(1, dueMs - nowMs));
    };
    from.on('data', (chunk: Buffer) => later(() => void (to.destroyed || to.write(chunk))));
    from.on('end', () => later(() => void (to.destroyed || to.end())));
    from.on('close', () => clearTimeout(timer));
  };

  const server: Server = createServer({ noDelay: true }, (client) => {
    const upstream = connect({ port: targetPort, host: '127.0.0.1', noDelay: true });
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) socket.on('error', drop).on('close', drop);
    forward(client, upstream);
    forward(upstream, client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve({
        port,
        setDelay(mean, jitter) {
          meanMs = mean;
          jitterMs = jitter;
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
