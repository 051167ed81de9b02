// Requests that Node's HTTP server would answer itself, with an empty body: an HTTP/1.1 request
// without a Host header (400, RFC 9112 3.2) and an `Expect` other than 100-continue (417, RFC 9110
// 10.1.1). Node's own answers are turned off (`requireHostHeader: false`, a 'checkExpectation'
// listener) and given here with the Error body, as every other answer is.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** Answers `status` with the Error body and closes the connection (what follows cannot be trusted to be framed). */
export function answerError(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: status, message });
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}

/** Passes a request on to `handler` unless it lacks the Host header HTTP/1.1 requires. */
export function requireHost(handler: RequestListener): RequestListener {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.httpVersion === '1.1' && request.headers.host === undefined)
      return answerError(response, 400, 'the Host header is missing; HTTP/1.1 requires it');
    handler(request, response);
  };
}

/** The answer to a request whose `Expect` header asks for something other than 100-continue. */
export function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  answerError(
    response,
    417,
    `the Expect header can only be "100-continue", got "${String(request.headers.expect).slice(0, 100)}"`,
  );
}
