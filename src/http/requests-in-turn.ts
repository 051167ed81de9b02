// Requests pipelined on one connection are handled one at a time, in order. Node's HTTP parser hands
// every request of a read to the 'request' listener at once, and the handlers are asynchronous, so
// none has written an answer (which would pause the socket) when the next is dispatched: one socket
// that sent 1,900 pipelined GET /metrics and never read made the server build and hold 1,900 answers
// (+250 MB of RSS), and a thousand such sockets were unbounded. Here a request waits, unhandled (a
// parsed request costs its headers only), until the answer before it has been handed to the kernel;
// a connection with more than `maxWaiting` requests waiting is closed, and so is one whose answer the
// client does not take for `sendTimeoutMs` (Node has no such time-out: it would wait for ever).
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Requests that may wait behind the one being answered on a connection. */
export const MAX_WAITING_REQUESTS = 32;

export interface InTurnOptions {
  /** How long an answer may sit unsent (the client reads nothing) before the connection is closed. */
  readonly sendTimeoutMs: number;
  readonly maxWaiting?: number;
}

interface Turns {
  busy: boolean;
  readonly waiting: [IncomingMessage, ServerResponse][];
}

/** The listener, and what a stop asks of it: each answer not yet begun closes its connection. */
export type InTurnListener = RequestListener & { closeAfterAnswers(this: void): void };

export function inTurn(
  handler: RequestListener,
  { sendTimeoutMs, maxWaiting = MAX_WAITING_REQUESTS }: InTurnOptions,
): InTurnListener {
  const connections = new WeakMap<Socket, Turns>();
  // At a stop a busy keep-alive connection is never idle: its client went on being served (new
  // writes acknowledged) until the grace cut every connection, requests in flight too. So from the
  // stop on, each answer closes its connection; those being answered then (one per connection) too,
  // by their header when it is not sent yet, and by the connection's end once they are.
  let closing = false;
  const answering = new Set<ServerResponse>();

  const answer = (socket: Socket, turns: Turns, request: IncomingMessage, response: ServerResponse): void => {
    turns.busy = true;
    let settled = false;
    if (closing) response.setHeader('Connection', 'close');
    else answering.add(response);
    const next = () => {
      if (settled) return;
      settled = true;
      answering.delete(response);
      if (closing) {
        // This answer closes the connection (or began before the stop, and it goes now): a request
        // pipelined behind it would be handled, its write made, and its answer sent nowhere.
        turns.waiting.length = 0;
        turns.busy = false;
        socket.destroySoon();
        return;
      }
      const following = turns.waiting.shift();
      if (following === undefined || socket.destroyed) {
        turns.busy = false;
        return;
      }
      // Node sets no time-out while answers are queued; the watch below may have set one.
      socket.setTimeout(0);
      answer(socket, turns, ...following);
    };
    // 'prefinish': the whole answer was written. Whatever the kernel did not take is still queued
    // here, and stays there while the client reads nothing.
    response.once('prefinish', () => {
      if (socket.writableLength > 0) response.setTimeout(sendTimeoutMs, () => socket.destroy());
    });
    // 'finish': the kernel has all of it; 'close': the connection went first.
    response.once('finish', next);
    response.once('close', next);
    handler(request, response);
  };

  const closeAfterAnswers = () => {
    closing = true;
    for (const response of answering) if (!response.headersSent) response.setHeader('Connection', 'close');
    answering.clear();
  };
  const listener: RequestListener = (request, response) => {
    const socket = request.socket;
    // The rest of a read that a closed connection still holds: nobody will read its answers.
    if (socket.destroyed) return;
    let turns = connections.get(socket);
    if (turns === undefined) {
      turns = { busy: false, waiting: [] };
      connections.set(socket, turns);
    }
    if (!turns.busy) {
      turns.busy = true;
      // Handled once the rest of the read has been parsed: a connection that turns out to have
      // pipelined too much is closed before any of its requests is handled.
      return queueMicrotask(() => (socket.destroyed ? undefined : answer(socket, turns, request, response)));
    }
    // Far more pipelined requests than any client needs: close, unanswered (a pipelining client
    // retries what was not answered, RFC 9112 9.3.2).
    if (turns.waiting.length >= maxWaiting) return void socket.destroy();
    turns.waiting.push([request, response]);
  };
  return Object.assign(listener, { closeAfterAnswers });
}
