// The warning for connections shed over the cap, at most one line per interval: the first shed is
// logged at once, those after it in the same interval are counted and logged in one line when it
// ends. One line per shed connection let a client that opens connections in a loop fill the log
// (and the disk under it) as fast as it could connect.
import type { Logger } from 'pino';

/** How often, at most, a flood of shed connections writes a line. */
export const SHED_WARNING_INTERVAL_MS = 10_000;

export interface ShedWarning {
  /** A connection was shed while `open` were open. */
  shed(open: number): void;
  /** Drops what is counted and its timer (the server closed). */
  stop(): void;
}

export function createShedWarning(
  logger: Logger,
  maxConnections: number,
  intervalMs = SHED_WARNING_INTERVAL_MS,
): ShedWarning {
  let counted = 0;
  let timer: NodeJS.Timeout | undefined;
  const endInterval = () => {
    timer = undefined;
    if (counted === 0) return;
    logger.warn(
      { shed: counted, seconds: intervalMs / 1000, maxConnections },
      'connections shed: too many open connections',
    );
    counted = 0;
    // Shedding went on: the next interval counts too, so a long flood still writes one line per interval.
    openInterval();
  };
  const openInterval = () => {
    timer = setTimeout(endInterval, intervalMs);
    // A server that is stopping waits for nothing of this.
    timer.unref();
  };
  return {
    shed(open) {
      if (timer !== undefined) {
        counted += 1;
        return;
      }
      logger.warn(
        { open, maxConnections },
        `connection shed: too many open connections (further ones are counted in one line per ${intervalMs / 1000} s)`,
      );
      openInterval();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
      counted = 0;
    },
  };
}
