// What the HTTP server itself does before a request reaches Koa: the cap on open connections,
// answers to parser errors, time-outs of slow clients and CONNECT, requests pipelined on one
// connection (requests-in-turn.ts) and requests Node would answer with an empty body
// (protocol-checks.ts). Each answer is the JSON Error body, as Koa's answers are.
import { STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { HttpLimits } from '../config.js';
import { refuseExpectation, requireHost } from './protocol-checks.js';
import { inTurn } from './requests-in-turn.js';
import { createShedWarning } from './shed-warning.js';

/** Seconds a client shed over the connection cap is asked to wait. */
const SHED_RETRY_AFTER_SECONDS = 1;

/**
 * How long a connection that was answered and ended stays open for the answer to reach the client.
 * Ending alone only half-closes it: Node then waits for the client's FIN, which a hostile client
 * never sends, and the connection kept its slot under the cap for ever. Destroyed at once, a socket
 * with unread bytes from the client (the rest of a body that came too late) is reset, and the reset
 * can make the client's kernel drop the answer before it is read.
 */
export const CLOSE_AFTER_ANSWER_MS = 250;

/** A complete response written straight to the socket, closing the connection. */
export function rawErrorResponse(status: number, message: string, headers: Record<string, string> = {}): string {
  const body = JSON.stringify({ error: status, message });
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Writes `answer`, ends the connection, and destroys it `CLOSE_AFTER_ANSWER_MS` later unless the client closed it first. */
export function answerAndClose(socket: Socket, answer: string): void {
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), CLOSE_AFTER_ANSWER_MS);
  socket.once('close', () => clearTimeout(timer));
}

/** The status and message for an error Node's HTTP parser or its time-out checks raised on a connection. */
export function clientErrorAnswer(code: string | undefined): { status: number; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, message: 'the request (headers or body) was not received in time' };
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'the request headers are too large' };
  return { status: 400, message: 'the request is not valid HTTP/1.1' };
}

interface SocketWithResponse extends Socket {
  /** Node's own link from a socket to the response in progress on it. */
  readonly _httpMessage?: ServerResponse | null;
}

/** What a guarded server's stop needs: every answer from now on closes its connection. */
export interface AnswerCloser {
  closeAfterAnswers(this: void): void;
}

/**
 * Installs the guards on `server` and the request listener, which hands `handler` only requests of
 * connections under the cap, one at a time per connection. The server must be created with
 * `requireHostHeader: false` (protocol-checks.ts answers that case).
 */
export function guardConnections(
  server: Server,
  handler: RequestListener,
  limits: HttpLimits,
  logger: Logger,
): AnswerCloser {
  const shed = new WeakSet<Socket>();
  const shedWarning = createShedWarning(logger, limits.maxConnections);
  server.once('close', () => shedWarning.stop());
  let open = 0;
  server.on('connection', (socket: Socket) => {
    if (open >= limits.maxConnections) {
      shed.add(socket);
      shedWarning.shed(open);
      answerAndClose(
        socket,
        rawErrorResponse(503, `the server has ${limits.maxConnections} connections open; retry shortly`, {
          'Retry-After': String(SHED_RETRY_AFTER_SECONDS),
        }),
      );
      return;
    }
    open += 1;
    socket.once('close', () => (open -= 1));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: SocketWithResponse) => {
    // Mid-response (or a reset peer) there is nothing valid left to say: only close.
    if (!socket.writable || error.code === 'ECONNRESET' || socket._httpMessage?.headersSent === true)
      return void socket.destroy();
    const { status, message } = clientErrorAnswer(error.code);
    answerAndClose(socket, rawErrorResponse(status, message));
  });
  // Without a listener Node closes a CONNECT's connection without a word. This is no proxy:
  // RFC 9110 15.6.2, 501 for a method the server supports for no resource.
  server.on('connect', (_request: IncomingMessage, socket: Socket) =>
    answerAndClose(socket, rawErrorResponse(501, 'CONNECT is not supported: this server is not a proxy')),
  );
  // Requests Node hands over as 'checkExpectation' take their turn with the others on their connection.
  const badExpectation = new WeakSet<IncomingMessage>();
  const checked = requireHost(handler);
  const inOrder = inTurn(
    (request, response) =>
      badExpectation.has(request) ? refuseExpectation(request, response) : checked(request, response),
    { sendTimeoutMs: limits.headersTimeoutMs },
  );
  const admit = (request: IncomingMessage, response: ServerResponse) => {
    if (shed.has(request.socket)) return void request.socket.destroy();
    inOrder(request, response);
  };
  server.on('request', admit);
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    badExpectation.add(request);
    admit(request, response);
  });
  return { closeAfterAnswers: inOrder.closeAfterAnswers };
}
