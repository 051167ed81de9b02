// The stack opened again after its data directory was read-only: when the embedded log finds its
// file system read-only (data-dir/read-only.ts) the whole stack is closed, letting go of every file
// so that an operator can unmount, check and mount the file system again; meanwhile every request
// but /healthz answers 503; once a probe file can be written there it is opened again as at a
// start. How a stack is opened is handed in (server-stack.ts, the one place it is wired).
import { stat } from 'node:fs/promises';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { dirWritable, isReadOnlyError, WRITABLE_POLL_MS } from '../data-dir/read-only.js';
import { EVENT_LOG_NAME } from '../log/file/file-log.js';
import type { FileLogHooks } from '../log/open-log.js';
import type { Stack, StackWiring } from './stack-types.js';

/** Opens the stack once, with the event log's hooks. */
export type StackOpener = (hooks: FileLogHooks) => Promise<Stack>;

/** What every request but /healthz is answered while the data directory is let go of. */
function readOnlyAnswer(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const [status, body] =
    path === '/healthz'
      ? [200, { status: 'ok' }]
      : [
          503,
          {
            error: 503,
            message:
              path === '/readyz'
                ? 'not ready: the data directory is read-only; the service opens it again once it is writable'
                : 'the data directory is read-only; nothing was done, and retrying once it is writable again is safe',
          },
        ];
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    ...(status === 503 ? { 'Retry-After': '5' } : {}),
  });
  res.end(JSON.stringify(body));
}

/** The stack, opened again after its data directory was read-only. */
export class RestartableStack {
  private stack: Stack | undefined;
  /** The stack last open (what the server's log, keys and projector name while none is). */
  private last: Stack | undefined;
  private handler: RequestListener = readOnlyAnswer;
  private state: 'opening' | 'open' | 'read-only' | 'closed' = 'opening';
  private watching: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  private digest: string | undefined;

  constructor(
    private readonly config: Config,
    private readonly wiring: StackWiring,
    private readonly opener: StackOpener,
  ) {}

  async open(): Promise<Stack> {
    const stack = await this.openStack(false);
    this.use(stack);
    return stack;
  }

  current(): Stack {
    const stack = this.stack ?? this.last;
    if (stack === undefined) throw new Error('the server has not opened its data directory yet');
    return stack;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.handler(req, res);
  }

  closeFeeds(): void {
    this.stack?.feeds.close();
  }

  lastDigest(): string | undefined {
    return this.digest;
  }

  async close(): Promise<void> {
    const state = this.state;
    this.state = 'closed';
    this.wake?.();
    await this.watching;
    const stack = this.stack;
    this.stack = undefined;
    if (stack !== undefined && state === 'open') this.digest = await stack.close({ digest: true });
  }

  private openStack(reclaimOwnLock: boolean): Promise<Stack> {
    return this.opener({ onReadOnly: () => this.readOnly(), reclaimOwnLock });
  }

  private use(stack: Stack): void {
    this.stack = stack;
    this.last = stack;
    this.handler = stack.handle;
    this.state = 'open';
  }

  /** Lets go of the data directory, then opens it again once it can be written. */
  private readOnly(): void {
    if (this.state !== 'open') return;
    const { logger } = this.wiring;
    this.state = 'read-only';
    this.handler = readOnlyAnswer;
    const stack = this.stack;
    this.stack = undefined;
    this.watching = (async () => {
      // What was let go of: only the same history, at least as long, is taken up again.
      const history =
        stack === undefined
          ? undefined
          : { identity: stack.log.identity, records: (await stack.log.head()).get(0) ?? 0 };
      await stack
        ?.close({ digest: false })
        .catch(
          (error: unknown) => void logger.warn({ err: error }, 'closing the read-only data directory failed in part'),
        );
      logger.error(
        { dataDir: this.config.dataDir },
        'let go of the read-only data directory: every request but /healthz answers 503 until it is writable again (unmount, check and mount it now if a disk error made it read-only)',
      );
      while (this.state === 'read-only') {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, WRITABLE_POLL_MS).unref();
        });
        if (this.state === 'read-only') await this.takeUpAgain(history);
      }
    })();
  }

  /**
   * Opens the data directory again once it is writable and still holds the event log (an unmounted
   * mount point is an empty, writable directory: nothing is created there); resolves with whether it
   * is open. Only a read-only file system again is tried again: every other failure, or another
   * history in its place, stops the server as it would stop a start.
   */
  private async takeUpAgain(
    history: { readonly identity: string; readonly records: number } | undefined,
  ): Promise<boolean> {
    const { logger, onFatal } = this.wiring;
    if (!(await dirWritable(this.config.dataDir)) || !(await isFile(join(this.config.dataDir, EVENT_LOG_NAME))))
      return false;
    let next: Stack;
    try {
      next = await this.openStack(true);
    } catch (error) {
      if (isReadOnlyError(error)) return false;
      logger.fatal({ err: error }, 'could not open the data directory again');
      this.state = 'closed';
      onFatal(error as Error);
      return false;
    }
    const records = (await next.log.head()).get(0) ?? 0;
    if (
      this.state !== 'read-only' ||
      (history !== undefined && (next.log.identity !== history.identity || records < history.records))
    ) {
      await next.close({ digest: false }).catch(() => undefined);
      if (this.state !== 'read-only') return false;
      const error = new Error(
        `the data directory ${this.config.dataDir} holds another history than the one let go of (${records} records, ${history?.records ?? 0} before): refusing to serve it`,
      );
      logger.fatal({ err: error }, 'could not open the data directory again');
      this.state = 'closed';
      onFatal(error);
      return false;
    }
    this.use(next);
    logger.info(
      { dataDir: this.config.dataDir },
      'the data directory is writable again: opened it again, and requests are served',
    );
    return true;
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (found) => found.isFile(),
    () => false,
  );
}
