import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';
import { bufferedDestination } from './log-destination.js';

/** A line waits at most this long in the buffer of an asynchronous destination. */
const LOG_FLUSH_MS = 100;
/** Characters an asynchronous destination gathers before it writes (about 100 request lines). */
const LOG_BATCH_CHARS = 16_384;

/**
 * Structured JSON logs. The destination is injected so tests can capture lines in memory. A
 * destination backed by a file descriptor (the process's stdout) is written asynchronously: a log
 * line (one per request at `info`) is kept in memory and written with others once they hold
 * LOG_BATCH_CHARS or LOG_FLUSH_MS have passed, instead of one write(2) per line on the request
 * path. Lines are flushed at shutdown (flushLogger) and at exit, so only a crash (SIGKILL) can
 * lose the last ones.
 */
export function createLogger(level: Config['logLevel'], destination?: DestinationStream): Logger {
  return pino({ level, base: { service: 'report-store' }, redact: ['authorization', 'token'] }, destination === undefined ? undefined : asynchronous(destination));
}

function asynchronous(destination: DestinationStream): DestinationStream {
  const { fd } = destination as { fd?: unknown };
  if (typeof fd !== 'number') return destination;
  const buffered = bufferedDestination(fd, { flushMs: LOG_FLUSH_MS, batchChars: LOG_BATCH_CHARS });
  process.once('exit', () => buffered.flushSync());
  return buffered;
}

/** Resolves once every line logged so far has been written. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
