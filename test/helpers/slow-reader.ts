// A client that reads nothing for as long as it is told to, with a receive buffer of about 2 KB
// (SO_RCVBUF, which Node's sockets cannot set: a python3 child), so that what a server writes to
// it stays in the server's own buffers (its kernel's send queue) instead of the client's. Told to
// go on, it reads until the server closes or resets the connection, and hands over what it got.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';

const SCRIPT = `
import socket, sys
host, port, path, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
s.connect((host, port))
s.sendall(("GET %s HTTP/1.1\\r\\nHost: %s\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % (path, host, token)).encode())
print(s.getsockname()[1], flush=True)
sys.stdin.readline()
s.settimeout(5)
got = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
except (ConnectionResetError, socket.timeout):
    pass
sys.stdout.buffer.write(b"---\\n" + got)
sys.stdout.flush()
`;

export class SlowReader {
  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    /** The client's port: its connection's row in /proc/net/tcp. */
    readonly localPort: number,
    private readonly output: { text: string },
  ) {}

  static async open(url: string, path: string, token: string): Promise<SlowReader> {
    const { hostname, port } = new URL(url);
    const child = spawn('python3', ['-c', SCRIPT, hostname, port, path, token]);
    const output = { text: '' };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.text += chunk));
    while (!output.text.includes('\n')) {
      const [exited] = await Promise.race([once(child.stdout, 'data'), once(child, 'exit').then(() => ['exit'])]);
      if (exited === 'exit') throw new Error('the slow reader (python3) exited before it connected');
    }
    return new SlowReader(child, Number(output.text.split('\n')[0]), output);
  }

  /** Reads until the server closes or resets the connection (or 5 s of silence); what it received. */
  async readAll(): Promise<string> {
    const exited = once(this.child, 'exit');
    this.child.stdin.write('go\n');
    await exited;
    return this.output.text.slice(this.output.text.indexOf('---\n') + 4);
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}
