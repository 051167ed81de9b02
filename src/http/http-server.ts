// The node:http server the app runs in, with the limits a client may not overstay and the guards of
// connection-guard.ts. server.ts listens with it; tests build one around a handler of their own.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { HttpLimits } from '../config.js';
import { guardConnections, type AnswerCloser } from './connection-guard.js';

/** The node:http server, and the stop's ask of its guards (connection-guard.ts). */
export interface HttpServer extends AnswerCloser {
  readonly server: Server;
}

export function createHttpServer(handler: RequestListener, limits: HttpLimits, logger: Logger): HttpServer {
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Slow-loris guards, checked this often: a connection over its time-out is answered 408 and
    // closed at most this late, which is what a client shed over the cap waits beyond the time-out
    // (Node's default, 30 s, would let a client overstay it that long). A check walks the open
    // connections: a thousand of them four times a second is nothing.
    connectionsCheckingInterval: Math.max(50, Math.min(250, Math.floor(limits.headersTimeoutMs / 4))),
    // The guard answers a request without Host itself, with the Error body (Node's 400 has none).
    requireHostHeader: false,
  });
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Every header is kept: Node's default keeps the first 2,000 and drops the rest without a word,
  // so an If-Match, an Idempotency-Key or a second Authorization after them went unseen (a
  // conditional DELETE ran unconditionally). The headers' size limit (431) still bounds them all.
  server.maxHeadersCount = 0;
  const { closeAfterAnswers } = guardConnections(server, handler, limits, logger);
  return { server, closeAfterAnswers };
}
