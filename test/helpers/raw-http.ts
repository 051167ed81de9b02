// Raw TCP clients for tests of what the HTTP server does below the request level: connections that
// send nothing, pipeline, never read, or keep their end open as a hostile client does.
import { connect, type Socket } from 'node:net';

/**
 * Opens a connection to `url`. `halfOpen`: the client keeps its end open when the server ends its
 * own (Node's default closes both), as a client that never sends its FIN does.
 */
export function openSocket(url: string, { halfOpen = false } = {}): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: halfOpen }, () => {
      socket.off('error', reject);
      // Later errors (a reset from the server) are part of what the tests look at, never a crash.
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Everything the server sends until it ends its side (or closes), as text. */
export function readUntilEnd(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    socket.once('end', done);
    socket.once('close', done);
  });
}

/** The status and parsed Error body of the first response in `text`. */
export function errorAnswer(text: string): { status: number; body: { error: number; message: string }; head: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
  return { status, head, body: JSON.parse(body) as { error: number; message: string } };
}

/** `count` GET requests for `paths` in turn, as one pipelined string. */
export function pipelined(paths: readonly string[], count: number): string {
  return Array.from(
    { length: count },
    (_, i) => `GET ${paths[i % paths.length] ?? '/'} HTTP/1.1\r\nHost: x\r\n\r\n`,
  ).join('');
}
