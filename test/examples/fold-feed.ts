// A downstream consumer over HTTP: follows GET /events (NDJSON) and folds it with the service's own
// projections/ code to the state digest `reports replay` prints, on either log and from any
// instance. The feed never sends sealed content: a live report's create comes opened (its name and
// tag in the clear), any other without its box, marked "erased" — so this consumer needs no key and
// holds no deleted report's name. It keeps the position of the last event of each partition, which
// is where it resumes (`?after=`) after the connection ends, whether it or the server ended it.
// (Quoted in docs/topic-contract.md; a test runs it.)
import { createHash } from 'node:crypto';
import { canonicalState } from '../../projections/canonical.js';
import { createState, evolve, type FoldEvent } from '../../projections/reports.js';

/** A line of the feed: an event with its position, a heartbeat (an empty line), or the last line the server writes. */
type FeedLine = { position: string; event?: FoldEvent; invalid?: string } | { end: string; after: string | null };

export class FeedFolder {
  readonly reports = createState();
  /** The position of the last event folded on each partition (`N`, or `P:O` on Kafka). */
  private readonly last = new Map<string, string>();

  /** Where to resume: `?after=` takes it. */
  get after(): string | undefined {
    return this.last.size === 0 ? undefined : [...this.last.values()].join(',');
  }

  fold(event: FoldEvent, position: string): void {
    evolve(this.reports, event); // a create shown without its box folds as sealed content no key opens: the line null, as replay's
    this.last.set(position.includes(':') ? (position.split(':')[0] as string) : '0', position);
  }

  /** The state digest of `reports replay`: `sha256:<hex>`. */
  digest(): string {
    return `sha256:${createHash('sha256').update(canonicalState(this.reports)).digest('hex')}`;
  }
}

/**
 * Folds the feed of `url` into `folder` until `signal` aborts or the server ends the feed; resolves
 * with the server's reason in the latter case (resume with `folder.after`).
 */
export async function followFeed(
  url: string,
  token: string,
  folder: FeedFolder,
  signal: AbortSignal,
): Promise<string | undefined> {
  const after = folder.after === undefined ? '' : `?after=${encodeURIComponent(folder.after)}`;
  const response = await fetch(`${url}/events${after}`, { headers: { Authorization: `Bearer ${token}` }, signal });
  if (!response.ok || !response.body)
    throw new Error(`GET /events answered ${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for await (const chunk of response.body) {
      pending += decoder.decode(chunk as Uint8Array, { stream: true });
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) {
        if (text === '') continue; // a heartbeat
        const line = JSON.parse(text) as FeedLine;
        if ('end' in line) return line.end;
        if (line.event) folder.fold(line.event, line.position); // an invalid record is skipped, as the service does
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return undefined;
}

// node dist/test/examples/fold-feed.js http://127.0.0.1:8080 "$(cat data/token)"
if (process.argv[1]?.endsWith('fold-feed.js')) {
  const [url = 'http://127.0.0.1:8080', token = ''] = process.argv.slice(2);
  const folder = new FeedFolder();
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  const timer = setInterval(
    () =>
      console.log(
        `live reports: ${folder.reports.size}; after ${folder.after ?? '-'}; state digest: ${folder.digest()}`,
      ),
    1000,
  );
  while (!stop.signal.aborted) {
    const ended = await followFeed(url, token, folder, stop.signal).catch((error: unknown) => String(error));
    if (ended === undefined || stop.signal.aborted) continue;
    console.error(`feed ended (${ended}); resuming after ${folder.after ?? 'the start'} in a second`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  clearInterval(timer);
}
