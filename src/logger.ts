import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';

/** Bytes an asynchronous destination gathers before it writes (about 15 request lines). */
const LOG_BATCH_BYTES = 2048;
/**
 * The most one write takes. sonic-boom measures the UTF-8 length of its last pending chunk on
 * every line it takes, so a line costs in proportion to this: 4 KiB instead of its 16 KiB took
 * 0.7 µs off a request line (4.9 -> 4.2 µs of CPU, writes included; 64 KiB: 6 µs).
 */
const LOG_CHUNK_BYTES = 4096;
/** A line waits at most about this long before it is written. */
const LOG_FLUSH_MS = 100;
/** Bytes waiting for stdout beyond which new lines are dropped (counted, and reported once it drains). */
const LOG_PENDING_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long a stop waits for stdout to take the pending lines. */
const LOG_STOP_FLUSH_MS = 2000;

/**
 * Structured JSON logs. The destination is injected so tests can capture lines in memory. A
 * destination backed by a file descriptor (the process's stdout) is replaced by pino's
 * asynchronous one on that descriptor (sonic-boom): lines (one per request at `info`) are written
 * in batches of LOG_BATCH_BYTES or every LOG_FLUSH_MS, off the request path. If stdout stops
 * taking them, at most LOG_PENDING_LIMIT_BYTES wait; later lines are dropped, and their count is
 * logged once stdout drains. Lines are flushed at shutdown (flushLogger) and at exit, so only a
 * crash (SIGKILL) or a stdout that does not take them loses the last ones.
 */
export function createLogger(level: Config['logLevel'], destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'report-store' }, redact: ['authorization', 'token'] };
  const { fd } = (destination ?? {}) as { fd?: unknown };
  if (typeof fd !== 'number') return pino(options, destination);
  let exiting = false;
  // Registered before pino's own exit hook, so it runs first: at exit a full pipe is not waited
  // for (sonic-boom would retry EAGAIN forever), and what it did not take is given up.
  process.once('exit', () => {
    exiting = true;
    try {
      stream.flushSync();
    } catch {
      stream.destroy();
    }
  });
  const stream = pino.destination({
    dest: fd,
    sync: false,
    minLength: LOG_BATCH_BYTES,
    maxWrite: LOG_CHUNK_BYTES,
    maxLength: LOG_PENDING_LIMIT_BYTES,
    periodicFlush: LOG_FLUSH_MS,
    retryEAGAIN: () => !exiting,
  });
  // A stdout that fails (closed, EBADF) must not take the service down: sonic-boom keeps the
  // failed batch and tries it again with the next, and past the limit new lines are dropped.
  stream.on('error', () => undefined);
  const logger = pino(options, stream);
  let dropped = 0;
  stream.on('drop', () => void dropped++);
  stream.on('drain', () => {
    if (dropped === 0) return;
    logger.warn(
      { droppedLines: dropped, pendingLimitBytes: LOG_PENDING_LIMIT_BYTES },
      'log lines dropped: stdout did not take them',
    );
    dropped = 0;
  });
  return logger;
}

/**
 * Resolves once every line logged so far has been written, or after `timeoutMs` (a stop must not
 * wait for a stdout that takes nothing: what is left is tried once more at exit).
 */
export function flushLogger(logger: Logger, timeoutMs = LOG_STOP_FLUSH_MS): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs).unref();
    logger.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
