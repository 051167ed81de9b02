import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';

/** A line waits at most this long in the buffer of an asynchronous destination. */
const LOG_FLUSH_MS = 100;
/** Bytes an asynchronous destination gathers before it writes (about 30 request lines). */
const LOG_WRITE_BYTES = 4096;

/**
 * Structured JSON logs. The destination is injected so tests can capture lines in memory. A
 * destination backed by a file descriptor (the process's stdout) is written asynchronously: a log
 * line (one per request at `info`) is appended to a buffer, written once it holds LOG_WRITE_BYTES
 * or LOG_FLUSH_MS have passed, instead of one write(2) per line on the request path. Lines are
 * flushed at shutdown (flushLogger) and by pino's exit hook, so only a crash (SIGKILL) can lose
 * the last ones.
 */
export function createLogger(level: Config['logLevel'], destination?: DestinationStream): Logger {
  return pino({ level, base: { service: 'report-store' }, redact: ['authorization', 'token'] }, destination === undefined ? undefined : asynchronous(destination));
}

function asynchronous(destination: DestinationStream): DestinationStream {
  const { fd } = destination as { fd?: unknown };
  return typeof fd === 'number' ? pino.destination({ fd, sync: false, minLength: LOG_WRITE_BYTES, periodicFlush: LOG_FLUSH_MS }) : destination;
}

/** Resolves once every line logged so far has been written. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
