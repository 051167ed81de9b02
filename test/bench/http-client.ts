// A lean HTTP/1.1 client connection for the open-loop generator: one keep-alive socket, one request
// in flight at a time, the answer's status and body. It reads what the servers under test send
// (a Content-Length body, a chunked one, or none for 1xx/204/304) and nothing more: no redirects,
// no pipelining, no compression. It exists because node:http's client costs about three times the
// CPU a request, which on the bench's 2-core machine is taken from the server being measured.
import { connect, type Socket } from 'node:net';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

type Done = (answer: HttpAnswer | Error) => void;

const HEAD_END = '\r\n\r\n';
/** A response head larger than this is not one of the servers' answers. */
const MAX_HEAD_BYTES = 64 * 1024;

interface Parsed {
  readonly answer: HttpAnswer;
  /** Characters of the buffer the response took. */
  readonly length: number;
  readonly close: boolean;
}

/**
 * The first complete response in `buffer` (latin1: one character per byte), undefined while it is
 * incomplete; throws on bytes that are not an HTTP/1.1 response.
 */
export function parseResponse(buffer: string): Parsed | undefined {
  const headEnd = buffer.indexOf(HEAD_END);
  if (headEnd < 0) {
    if (buffer.length > MAX_HEAD_BYTES) throw new Error('response head too large');
    return undefined;
  }
  const lines = buffer.slice(0, headEnd).split('\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (statusLine === null) throw new Error(`not an HTTP response: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const status = Number(statusLine[1]);
  let contentLength: number | undefined;
  let chunked = false;
  let close = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    if (name === 'content-length') contentLength = Number(value);
    else if (name === 'transfer-encoding') chunked = value.split(',').some((coding) => coding.trim() === 'chunked');
    else if (name === 'connection') close = value.split(',').some((option) => option.trim() === 'close');
  }
  const bodyStart = headEnd + HEAD_END.length;
  if (status < 200 || status === 204 || status === 304)
    return { answer: { status, body: '' }, length: bodyStart, close };
  if (chunked) return parseChunked(buffer, bodyStart, status, close);
  if (contentLength === undefined || !Number.isSafeInteger(contentLength) || contentLength < 0)
    throw new Error('a response without a usable Content-Length');
  if (buffer.length < bodyStart + contentLength) return undefined;
  return {
    answer: { status, body: buffer.slice(bodyStart, bodyStart + contentLength) },
    length: bodyStart + contentLength,
    close,
  };
}

function parseChunked(buffer: string, from: number, status: number, close: boolean): Parsed | undefined {
  let at = from;
  let body = '';
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buffer.slice(at, lineEnd), 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('a malformed chunk size');
    const dataStart = lineEnd + 2;
    if (size === 0) {
      // No trailers from the servers under test: the last chunk is followed by an empty line.
      if (buffer.length < dataStart + 2) return undefined;
      return { answer: { status, body }, length: dataStart + 2, close };
    }
    if (buffer.length < dataStart + size + 2) return undefined;
    body += buffer.slice(dataStart, dataStart + size);
    at = dataStart + size + 2;
  }
}

export class HttpConnection {
  private buffer = '';
  private pending: { done: Done; timer: NodeJS.Timeout } | undefined;
  private closing = false;

  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.received(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the connection closed')));
  }

  /** A connection to `url`'s host and port; `onClose` runs once it has closed after opening, for whatever reason. */
  static open(url: URL, onClose: () => void): Promise<HttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port || 80), noDelay: true });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        // Only a connection that opened reports its close (a failed connect rejects instead).
        socket.once('close', onClose);
        resolve(new HttpConnection(socket, url.host));
      });
    });
  }

  /** Whether it can take another request (open, nothing in flight, the server did not ask to close). */
  get usable(): boolean {
    return !this.closing && this.pending === undefined && !this.socket.destroyed;
  }

  /** Sends one request; `done` gets the answer, or the error that ended the connection, once. */
  request(
    method: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    timeoutMs: number,
    done: Done,
  ): void {
    if (!this.usable) return void done(new Error('the connection cannot take a request'));
    const timer = setTimeout(() => this.socket.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    this.pending = { done, timer };
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    this.socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  close(): void {
    this.closing = true;
    this.socket.destroy();
  }

  private received(chunk: string): void {
    this.buffer += chunk;
    const pending = this.pending;
    if (pending === undefined) return void this.socket.destroy(new Error('bytes arrived with no request in flight'));
    let parsed: Parsed | undefined;
    try {
      parsed = parseResponse(this.buffer);
    } catch (error) {
      return void this.socket.destroy(error as Error);
    }
    if (parsed === undefined) return;
    this.buffer = this.buffer.slice(parsed.length);
    this.pending = undefined;
    clearTimeout(pending.timer);
    if (parsed.close) {
      this.closing = true;
      this.socket.end();
    }
    pending.done(parsed.answer);
  }

  private fail(error: Error): void {
    const pending = this.pending;
    this.closing = true;
    if (pending === undefined) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    pending.done(error);
  }
}
