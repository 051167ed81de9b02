// A test client of GET /events: keeps every line (NDJSON) or frame (SSE) the server sent, so tests
// wait for what they expect and look at all of it.
import { request, type IncomingMessage } from 'node:http';
import { until } from './async.js';
import { TEST_TOKEN } from './token.js';

export interface FeedLine {
  readonly position?: string;
  readonly event?: { type: string; data: Record<string, unknown> & { id: string } };
  readonly erased?: boolean;
  readonly opened?: string;
  readonly end?: string;
  readonly after?: string | null;
}

/** One SSE frame: its fields as sent (`comment` for a `:` line). */
export interface SseFrame {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
}

export class FeedClient {
  readonly lines: FeedLine[] = [];
  readonly frames: SseFrame[] = [];
  /** Empty lines (NDJSON heartbeats). */
  heartbeats = 0;
  text = '';
  ended = false;
  private done: Promise<void> = Promise.resolve();

  /** A node:http client (fetch's pool may keep an aborted response's connection open a while). */
  private constructor(
    private readonly response: IncomingMessage,
    private readonly sse: boolean,
  ) {
    this.status = response.statusCode ?? 0;
  }

  readonly status: number;

  header(name: string): string | undefined {
    const value = this.response.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  static async open(
    url: string,
    {
      query = '',
      headers = {},
      token = TEST_TOKEN,
    }: { query?: string; headers?: Record<string, string>; token?: string } = {},
  ): Promise<FeedClient> {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const sent = request(
        `${url}/events${query}`,
        { headers: { Authorization: `Bearer ${token}`, ...headers }, agent: false },
        resolve,
      );
      sent.once('error', reject);
      sent.end();
    });
    const client = new FeedClient(response, (headers['Accept'] ?? '').includes('text/event-stream'));
    client.done = client.read();
    return client;
  }

  /** Lines with an event, in order. */
  events(): FeedLine[] {
    return this.lines.filter((line) => line.event !== undefined);
  }

  async waitFor(condition: (client: FeedClient) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    await until(() => condition(this), what, { timeoutMs, everyMs: 10 });
  }

  /** Goes away (the connection closes) and waits until the reading stopped. */
  async close(): Promise<void> {
    this.response.destroy();
    await this.done;
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of this.response) {
        const text = decoder.decode(chunk as Buffer, { stream: true });
        this.text += text;
        pending += text;
        const separator = this.sse ? '\n\n' : '\n';
        const parts = pending.split(separator);
        pending = parts.pop() ?? '';
        for (const part of parts) {
          if (this.sse) this.frame(part);
          else this.line(part);
        }
      }
    } catch {
      // aborted by the test, or the server cut the connection
    }
    this.ended = true;
  }

  private line(text: string): void {
    if (text === '') this.heartbeats += 1;
    else this.lines.push(JSON.parse(text) as FeedLine);
  }

  private frame(text: string): void {
    const frame: Record<string, string> = {};
    for (const field of text.split('\n')) {
      if (field.startsWith(':')) frame['comment'] = field.slice(1).trim();
      else {
        const at = field.indexOf(': ');
        frame[field.slice(0, at)] = field.slice(at + 2);
      }
    }
    this.frames.push(frame);
    if (frame['data'] !== undefined) this.lines.push(JSON.parse(frame['data']) as FeedLine);
  }
}
