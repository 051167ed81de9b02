// Starts the real server in-process on 127.0.0.1:0 with a temporary data directory and a known token.
import type { Tracer } from '@opentelemetry/api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { loadConfig, type Env } from '../../src/config.js';
import type { ReloadRequests } from '../../src/process-signals.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { requestTo, type TestRequest } from './request.js';
import { TEST_TOKEN } from './token.js';

export { TEST_TOKEN } from './token.js';

export async function tempDir(prefix = 'reports-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** A pino logger that keeps its lines in memory (so tests can assert on logs and stay quiet). */
export function memoryLogger(): { logger: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, text };
}

export interface TestServer extends RunningServer {
  readonly dataDir: string;
  readonly logLines: () => Record<string, unknown>[];
  /** Closes the server and removes its data directory. */
  dispose(): Promise<void>;
  readonly request: TestRequest;
}

export interface TestServerOptions {
  readonly dataDir?: string;
  readonly tracer?: Tracer;
  readonly reloadRequests?: ReloadRequests;
  readonly watchTokensFile?: boolean;
  /** How long a stop gives answers in flight (2 s unless set). */
  readonly shutdownGraceMs?: number;
}

export async function startTestServer(env: Env = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await tempDir());
  // The tests' fetch and the server share one event loop: after a long synchronous step in a test
  // (a schema parser, a big fold) both keep-alive timers have expired at once, and the server's
  // could close the pooled connection the next request was just written to (ECONNRESET). Idle
  // connections are kept for ten minutes unless a test sets the time-out itself.
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    REPORTS_TOKENS: TEST_TOKEN,
    REPORTS_DATA_DIR: dataDir,
    REPORTS_KEEP_ALIVE_TIMEOUT_MS: '600000',
    ...env,
  });
  const { logger, lines } = memoryLogger();
  const { tracer, reloadRequests, watchTokensFile } = options;
  const server = await startServer(config, {
    logger,
    announceToken: () => undefined,
    shutdownGraceMs: options.shutdownGraceMs ?? 2000,
    ...(tracer ? { tracer } : {}),
    ...(reloadRequests ? { reloadRequests } : {}),
    ...(watchTokensFile === undefined ? {} : { watchTokensFile }),
  });
  await server.projector.caughtUp();
  return {
    ...server,
    dataDir,
    logLines: lines,
    async dispose() {
      await server.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
    request: requestTo(server.url),
  };
}
