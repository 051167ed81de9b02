// What a server opens in its data directory or log, and can open again: the event log, the key
// store, the snapshot, the projector and the app over them (server.ts keeps the tokens and the
// HTTP listener, which outlive it). When the embedded log finds its file system read-only
// (data-dir/read-only.ts) the whole of it is closed, letting go of every file so that an operator
// can unmount, check and mount the file system again; meanwhile every request but /healthz answers
// 503; once a probe file can be written there it is opened again as at a start, which checks the
// files as a start does (a torn tail cut, the key store against the log).
import { stat } from 'node:fs/promises';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { Closers } from './closers.js';
import type { Config } from './config.js';
import type { FeedHub } from './feed/feed-hub.js';
import type { KeyStore } from './keys/key-store.js';
import { checkNewestKeyHeld } from './keys/key-upkeep.js';
import { StartUpkeep } from './keys/start-upkeep.js';
import { openKeyStore } from './keys/open-key-store.js';
import { hasResumableScan } from './log/capabilities.js';
import type { EventLog } from './log/event-log.js';
import { dirWritable, isReadOnlyError, WRITABLE_POLL_MS } from './data-dir/read-only.js';
import { EVENT_LOG_NAME } from './log/file/file-log.js';
import { openEventLog, type FileLogHooks } from './log/open-log.js';
import { stateDigest } from './projector/fold-log.js';
import { ProjectionHealth, startHeadProbe } from './projector/health.js';
import { Projector } from './projector/projector.js';
import { createReadModel } from './read-model/read-model.js';
import { defaultFoldThreads } from './read-model/sharded-fold.js';
import type { ReportService } from './reports/service.js';
import { createAutoSnapshot } from './snapshot/auto-snapshot.js';
import { resumeOf } from './snapshot/snapshot-anchor.js';
import { removeStaleTemporaries } from './snapshot/snapshot-space.js';
import { loadNewestSnapshot, readNewestSnapshot, snapshotDir } from './snapshot/snapshot-store.js';
import type { TokenReloadFigures } from './tokens/token-reloader.js';
import type { CurrentTokens } from './tokens/token-set.js';

/** What the stack is wired with from the server's part that outlives it. */
export interface StackWiring {
  readonly logger: Logger;
  readonly onFatal: (error: Error) => void;
  readonly tokens: CurrentTokens;
  readonly tokenReloads: () => TokenReloadFigures;
  readonly tracer?: Tracer;
}

/** What the app is built over. */
export interface StackParts extends Omit<StackWiring, 'onFatal'> {
  readonly log: EventLog;
  readonly keys: KeyStore;
  readonly projector: Projector;
}

export type WireApp = (parts: StackParts) => { app: Koa; service: ReportService; feeds: FeedHub };

export interface Stack {
  readonly log: EventLog;
  readonly keys: KeyStore;
  readonly projector: Projector;
  readonly feeds: FeedHub;
  readonly handle: RequestListener;
  /** Closes everything, newest first; with `digest`, resolves with the state digest of what was folded (when the key store could be read). */
  close(options: { readonly digest: boolean }): Promise<string | undefined>;
}

async function openStack(config: Config, wiring: StackWiring, hooks: FileLogHooks, wire: WireApp): Promise<Stack> {
  const { logger, onFatal } = wiring;
  const snapshots = snapshotDir(config.dataDir);
  // Before anything is written (the lock included): on a full disk, what a dead writer left is the room.
  await removeStaleTemporaries(snapshots, logger);
  // The newest snapshot is read first: the log's start-up scan resumes where its history ends.
  const newest = await readNewestSnapshot(snapshots, logger);
  const log = await openEventLog(config, logger, newest && resumeOf(newest.snapshot), hooks);
  const closers = new Closers();
  closers.add('event log', () => log.close());
  const unwind = () =>
    closers.unwind((part, error) => logger.warn({ err: error, part }, 'could not close a part of the server'));
  try {
    const keys = await openKeyStore(log, config, logger);
    closers.add('key store', () => keys.close());
    const snapshot = await loadNewestSnapshot({
      dir: snapshots,
      log,
      head: await log.head(),
      logger,
      ...(newest ? { newest } : {}),
    });
    if (snapshot)
      logger.info(
        { events: snapshot.model.counts.records, reports: snapshot.model.reports.size, createdAt: snapshot.createdAt },
        'loaded a snapshot; folding only the tail of the log',
      );
    const model = snapshot?.model ?? createReadModel();
    // A snapshot names the newest key its history refers to: a key store that never held it stops the start now.
    checkNewestKeyHeld(model, keys);
    // The keys a crash or a shutdown left undestroyed, swept once caught up (start-upkeep.ts): of
    // keys.db, the slots it holds now (keys minted from now on are never swept).
    const upkeep: StartUpkeep = new StartUpkeep(model, keys, {
      logger,
      writeTimeoutMs: config.writeTimeoutMs,
      keySweepDelayMs: config.kafka?.keySweepDelayMs ?? 0,
      current: async () => projector.reach(await log.head(), config.writeTimeoutMs),
      ...(snapshot?.unerased ? { unerasedInSnapshot: snapshot.unerased } : {}),
    });
    // Opened at the newest snapshot's resume point but folding from before it: scan that part now,
    // so damage there stops the start as at any open.
    if (hasResumableScan(log)) await log.scanFrom(model.cursor);
    // At close, once the projector has stopped and before the key store closes: the digest of what
    // this instance folded, with the keys it holds (never waiting on a broker at shutdown); a key
    // store that failed (closed with a failed log) gives none.
    let digest: string | undefined;
    let wantDigest = false;
    closers.add('state digest', async () => {
      if (!wantDigest) return;
      const lookup = await keys
        .lookup({ fresh: false })
        .catch(
          (error: unknown) => void logger.warn({ err: error }, 'could not read the key store for the state digest'),
        );
      digest = lookup === undefined ? undefined : stateDigest(model.reports, lookup);
    });
    const autoSnapshot = createAutoSnapshot({
      dir: snapshots,
      log,
      logger,
      model,
      every: config.snapshotEvery,
      unerased: () => wired.service?.unconfirmedDeletions() ?? [],
    });
    const health = new ProjectionHealth(config.projectionStallMs);
    // The service exists once the app is wired, after the projector starts; it is asked for nothing before it caught up.
    const wired: { service?: ReportService } = {};
    const onCaughtUp = () => {
      try {
        checkNewestKeyHeld(model, keys);
      } catch (error) {
        logger.fatal({ err: error }, 'the key store does not hold the keys the event log refers to');
        onFatal(error as Error);
        return;
      }
      // Before the snapshot it may take: the deletions still to erase (the loaded snapshot's among
      // them) are the service's by then, and that snapshot lists them.
      try {
        upkeep.caughtUp();
      } finally {
        autoSnapshot.onCaughtUp();
      }
    };
    const projector: Projector = new Projector({
      log,
      logger,
      model,
      health,
      foldThreads: defaultFoldThreads(),
      onApplied: (records) => autoSnapshot.onApplied(records),
      onCaughtUp,
      onErased: (ended) => wired.service?.eraseLater(ended),
      ...(upkeep.onEndedInCatchUp ? { onEndedInCatchUp: upkeep.onEndedInCatchUp } : {}),
    });
    projector.start();
    closers.add('projector', async () => {
      await projector.stop();
      await autoSnapshot.idle();
      await upkeep.close();
    });
    closers.add(
      'head probe',
      startHeadProbe({
        health,
        head: () => log.head(),
        projected: () => model.cursor,
        intervalMs: Math.min(1000, Math.max(25, Math.floor(config.projectionStallMs / 4))),
      }),
    );
    const { logger: _logger, onFatal: _onFatal, ...shared } = wiring;
    const { app, service, feeds } = wire({ ...shared, logger, log, keys, projector });
    wired.service = service;
    upkeep.wired(service, feeds);
    closers.add('report service', () => service.stop());
    // Closed first: each feed is ended with a last line saying where to resume (after a let-go too).
    closers.add('feeds', () => feeds.close());
    // Koa's handler answers every failure itself (ctx.onerror): its promise never rejects.
    const koaHandle = app.callback();
    return {
      log,
      keys,
      projector,
      feeds,
      handle: (req, res) => void koaHandle(req, res),
      close: async ({ digest: asked }) => {
        wantDigest = asked;
        // Everything is closed whatever fails; then a failure (the log's last write, say) is the caller's.
        const failure = await unwind();
        if (failure !== undefined) throw failure;
        return digest;
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

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
export class Restartable {
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
    private readonly wire: WireApp,
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
    return openStack(this.config, this.wiring, { onReadOnly: () => this.readOnly(), reclaimOwnLock }, this.wire);
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
