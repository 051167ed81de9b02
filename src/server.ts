// Wires one server from a config: log -> projector -> service -> app -> listen. `main.ts` adds the
// process concerns (environment, signals, exit codes); tests call this directly.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createApp } from './http/app.js';
import { createHttpServer, type HttpServer } from './http/http-server.js';
import { bearerAuth } from './http/auth.js';
import { createMetrics } from './http/metrics.js';
import { createAsyncApiDocument, topicFacts } from './http/asyncapi.js';
import { createOpenApiDocument } from './http/openapi.js';
import type { EventLog } from './log/event-log.js';
import type { KeyStore } from './keys/key-store.js';
import { Projector } from './projector/projector.js';
import { isoClock } from './reports/envelope.js';
import { ReportService } from './reports/service.js';
import type { ReloadRequests } from './process-signals.js';
import {
  reloadTokens,
  resolveTokens,
  tokenNotice,
  variableSpecs,
  warnShortTokens,
  type GeneratedToken,
  type TokenSource,
} from './tokens/sources.js';
import { startTokenReloader, type TokenReloadFigures } from './tokens/token-reloader.js';
import { createTokenSet, type CurrentTokens } from './tokens/token-set.js';
import { checkStartSettings, listenError } from './start-checks.js';
import { SERVICE_VERSION } from './version.js';
import { FeedHub } from './feed/feed-hub.js';
import type { CommitListener } from './log/capabilities.js';
import { logKind } from './log/positions.js';
import { makePrivate } from './data-dir/data-dir.js';
import { Closers } from './closers.js';
import { Restartable, type StackParts, type StackWiring } from './server-stack.js';

export interface RunningServer {
  readonly url: string;
  readonly log: EventLog;
  readonly keys: KeyStore;
  readonly projector: Projector;
  /** Reads the tokens again and swaps them in, as a SIGHUP does; resolves with whether the file's tokens are in use. */
  reloadTokens(trigger?: string): Promise<boolean>;
  /**
   * Stops accepting, lets requests in flight finish, then stops the projector and closes the key
   * store and the log; resolves with the state digest of what was folded (as `reports replay` prints
   * it), unless the key store could not be read.
   */
  close(): Promise<{ digest?: string }>;
}

export interface ServerDeps {
  readonly logger: Logger;
  /** Where a generated token is announced (once, on the first start); by default stderr, the token itself only on a terminal. */
  readonly announceToken?: (generated: GeneratedToken) => void;
  /** How long in-flight requests get at shutdown before connections are cut. */
  readonly shutdownGraceMs?: number;
  /** Spans of writes (default: the global OpenTelemetry tracer, a no-op unless an SDK is registered). */
  readonly tracer?: Tracer;
  /**
   * Called when the server must not go on after its start (the key store does not hold the keys
   * the log refers to, found once the log is folded): `reports serve` stops and exits 1. Default: logged only.
   */
  readonly onFatal?: (error: Error) => void;
  /** Requests to reload the tokens (`reports serve`: SIGHUP). */
  readonly reloadRequests?: ReloadRequests;
  /** Whether a change of the tokens file reloads them (default true). */
  readonly watchTokensFile?: boolean;
  /** The caller ran checkStartSettings already (`reports serve` does, before loading this module): they run once. */
  readonly settingsChecked?: boolean;
}

export async function startServer(
  config: Config,
  {
    logger,
    announceToken = (generated) => process.stderr.write(tokenNotice(generated, { terminal: process.stderr.isTTY })),
    shutdownGraceMs = 10_000,
    tracer,
    onFatal = () => undefined,
    reloadRequests,
    watchTokensFile = true,
    settingsChecked = false,
  }: ServerDeps,
): Promise<RunningServer> {
  if (!settingsChecked) await checkStartSettings(config);
  await warnOpenDataDir(config.dataDir, logger);
  const closers = new Closers();
  const unwind = () =>
    closers.unwind((part, error) => logger.warn({ err: error, part }, 'could not close a part of the server'));
  try {
    const tokens = await resolveTokens(config, { logger });
    warnShortTokens(variableSpecs(config.metricsTokens, 'REPORTS_METRICS_TOKEN'), logger);
    if (tokens.generated) announceToken(tokens.generated);
    const current: CurrentTokens = { current: tokens.set };
    const tokenReloader = startTokenReloader({
      tokens: current,
      load: tokenLoader(config, tokens, logger),
      logger,
      ...(watchTokensFile && tokens.file ? { watchPath: tokens.file.path } : {}),
    });
    closers.add('token reloader', () => tokenReloader.close());
    const wiring: StackWiring = {
      logger,
      onFatal,
      tokens: current,
      tokenReloads: () => tokenReloader.figures(),
      ...(tracer ? { tracer } : {}),
    };
    // The log, the key store, the projector and the app: opened again, in-process, after the data directory was read-only (read-only.ts).
    const stacks = new Restartable(config, wiring, (stack) => createWiredApp(config, stack));
    closers.add('data directory', () => stacks.close());
    const first = await stacks.open();
    const http = await listen((req, res) => stacks.handle(req, res), config, logger);
    const { server } = http;
    closers.add('http server', () => closeServer(http, shutdownGraceMs));
    // Feeds never end by themselves: each is ended with a last line saying where to resume, before the server waits for its connections.
    closers.add('feeds', () => stacks.closeFeeds());
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    logger.info({ url, log: first.log.description, keys: first.keys.description }, 'listening');
    const unsubscribe = reloadRequests?.subscribe((trigger) => void tokenReloader.reload(trigger));
    if (unsubscribe) closers.add('reload requests', unsubscribe);
    return {
      url,
      get log() {
        return stacks.current().log;
      },
      get keys() {
        return stacks.current().keys;
      },
      get projector() {
        return stacks.current().projector;
      },
      reloadTokens: (trigger = 'reloadTokens') => tokenReloader.reload(trigger),
      close: async () => {
        // Everything is closed whatever fails; then a failure (the log's last write, say) is the caller's.
        const failure = await unwind();
        if (failure !== undefined) throw failure;
        const digest = stacks.lastDigest();
        return digest === undefined ? {} : { digest };
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/** How a reload reads the tokens: the file again, through the same parsing as the start; with REPORTS_TOKENS alone, that variable as parsed at start. */
function tokenLoader(config: Config, { file, read }: TokenSource, logger: Logger) {
  if (file === undefined) return () => Promise.resolve(createTokenSet(variableSpecs(config.tokens, 'REPORTS_TOKENS')));
  let readBefore = read;
  return async () => {
    const reloaded = await reloadTokens(config, file, { logger, ...(readBefore === undefined ? {} : { readBefore }) });
    readBefore = reloaded.read;
    return reloaded.set;
  };
}

/**
 * The HTTP app over a log and its projector: metrics, the command service, auth and routes, all
 * configured from `config`. Starting the projector is the caller's business.
 */
export function createWiredApp(
  config: Config,
  {
    log,
    keys,
    projector,
    logger,
    tokens,
    tokenReloads,
    tracer,
  }: Omit<StackParts, 'tokenReloads'> & { readonly tokenReloads?: () => TokenReloadFigures },
): { app: Koa; service: ReportService; feeds: FeedHub } {
  const metricsToken = config.metricsTokens.length > 0;
  const metrics = createMetrics({ log, keys, projector, health: projector.health, runtimeVersion: metricsToken });
  const feeds = new FeedHub(config.feed.maxFeeds);
  const service = new ReportService({
    log,
    keys,
    logger,
    projector,
    writeTimeoutMs: config.writeTimeoutMs,
    source: config.eventSource,
    newId: randomUUID,
    time: isoClock(),
    onAppend: (ms) => metrics.observeAppend(ms / 1000),
    onDecidedAgain: () => metrics.observeDecidedAgain(),
    onHeadRead: () => metrics.observeHeadRead(),
    onKeysErased: (ids) => feeds.erased(ids),
    ...(tracer ? { tracer } : {}),
  });
  metrics.observeService(service);
  if (tokenReloads !== undefined) metrics.observeTokenReloads(tokenReloads);
  const limits = { nameMaxChars: config.nameMaxChars, tagMaxChars: config.tagMaxChars };
  const feed = {
    hub: feeds,
    source: {
      log,
      cursor: () => projector.model.cursor,
      onApplied: (listener: CommitListener) => projector.onRecordsApplied(listener),
    },
    head: () => log.head(),
    keys,
    kind: logKind(config),
    limits: config.feed,
    caughtUp: () => projector.isCaughtUp(),
    known: (value: Buffer) => projector.encoded.eventOf(value),
    logger,
  };
  const app = createApp({
    feed,
    logger,
    metrics,
    service,
    health: projector.health,
    log,
    auth: bearerAuth(tokens),
    ...(metricsToken
      ? {
          metricsAuth: bearerAuth(
            { current: createTokenSet(variableSpecs(config.metricsTokens, 'REPORTS_METRICS_TOKEN')) },
            'metrics',
          ),
        }
      : {}),
    limits,
    bodyLimitBytes: config.bodyLimitBytes,
    openApiDocument: createOpenApiDocument(limits, SERVICE_VERSION, { metricsToken }),
    asyncApiDocument: createAsyncApiDocument(topicFacts(config), SERVICE_VERSION),
  });
  return { app, service, feeds };
}

/** Makes the data directory 0700 if group or others may use it, saying so (or that it could not). */
async function warnOpenDataDir(dataDir: string, logger: Logger): Promise<void> {
  const open = await makePrivate(dataDir);
  if (open === undefined) return;
  const mode = open.mode.toString(8).padStart(4, '0');
  if (open.madePrivate) logger.warn({ dataDir, mode }, 'the data directory was open to group or others; made it 0700');
  else
    logger.warn(
      { dataDir, mode },
      'the data directory is open to group or others and this process may not change it; chmod 700 it',
    );
}

async function listen(handler: RequestListener, config: Config, logger: Logger): Promise<HttpServer> {
  const http = createHttpServer(handler, config.http, logger);
  const { server } = http;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, config));
    server.once('error', failed);
    server.listen(config.port, config.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  return http;
}

function closeServer({ server, closeAfterAnswers }: HttpServer, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    // Each answer not yet begun closes its connection (connection-guard.ts): the clients of busy
    // keep-alive connections learn of the stop with their next answer, and the stop waits for those.
    closeAfterAnswers();
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
