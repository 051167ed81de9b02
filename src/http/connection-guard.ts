// What the HTTP server itself answers, before a request reaches Koa: parser errors, time-outs of
// slow clients, and connections over the cap. Each is the JSON Error body, as Koa's answers are.
import { STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { HttpLimits } from '../config.js';

/** Seconds a client shed over the connection cap is asked to wait. */
const SHED_RETRY_AFTER_SECONDS = 1;

/** A complete response written straight to the socket, closing the connection. */
export function rawErrorResponse(status: number, message: string, headers: Record<string, string> = {}): string {
  const body = JSON.stringify({ error: status, message });
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** The status and message for an error Node's HTTP parser or its time-out checks raised on a connection. */
export function clientErrorAnswer(code: string | undefined): { status: number; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'the request (headers or body) was not received in time' };
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'the request headers are too large' };
  return { status: 400, message: 'the request is not valid HTTP/1.1' };
}

interface SocketWithResponse extends Socket {
  /** Node's own link from a socket to the response in progress on it. */
  readonly _httpMessage?: ServerResponse | null;
}

/** Wraps the request listener so requests on a connection shed over the cap never reach the app. */
export function guardConnections(server: Server, handler: RequestListener, limits: HttpLimits, logger: Logger): RequestListener {
  const shed = new WeakSet<Socket>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    if (open >= limits.maxConnections) {
      shed.add(socket);
      logger.warn({ open, maxConnections: limits.maxConnections }, 'connection shed: too many open connections');
      socket.end(rawErrorResponse(503, `the server has ${limits.maxConnections} connections open; retry shortly`, { 'Retry-After': String(SHED_RETRY_AFTER_SECONDS) }));
      return;
    }
    open += 1;
    socket.once('close', () => (open -= 1));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: SocketWithResponse) => {
    // Mid-response (or a reset peer) there is nothing valid left to say: only close.
    if (!socket.writable || error.code === 'ECONNRESET' || socket._httpMessage?.headersSent === true) return void socket.destroy();
    const { status, message } = clientErrorAnswer(error.code);
    socket.end(rawErrorResponse(status, message));
  });
  return (request: IncomingMessage, response: ServerResponse) => {
    if (shed.has(request.socket)) return void request.socket.destroy();
    handler(request, response);
  };
}
