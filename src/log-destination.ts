// Where the server's log lines go when stdout is a file descriptor: lines are gathered in memory
// and written in batches, off the request path. pino's own asynchronous destination (sonic-boom)
// measures the UTF-8 length of its whole pending buffer on every line it takes, which at one
// access-log line per request cost more than the line itself; here a line costs an array push.
import { write, writeSync } from 'node:fs';

export interface BufferedDestinationOptions {
  /** A line waits at most this long before it is written. */
  readonly flushMs: number;
  /** Pending lines are written as soon as they hold this many characters. */
  readonly batchChars: number;
}

export interface BufferedDestination {
  write(line: string): void;
  /** Calls `done` once every line taken so far has been written (pino's `logger.flush`). */
  flush(done?: (error?: Error) => void): void;
  /** Writes every pending line now, synchronously (at exit). */
  flushSync(): void;
}

export function bufferedDestination(fd: number, { flushMs, batchChars }: BufferedDestinationOptions): BufferedDestination {
  let pending: string[] = [];
  let pendingChars = 0;
  let writing = false;
  let timer: NodeJS.Timeout | undefined;
  let waiting: ((error?: Error) => void)[] = [];

  const take = (): string => {
    const text = pending.join('');
    pending = [];
    pendingChars = 0;
    return text;
  };

  const drain = (): void => {
    if (writing) return;
    if (pending.length === 0) {
      const done = waiting;
      waiting = [];
      for (const callback of done) callback();
      return;
    }
    writing = true;
    const bytes = Buffer.from(take(), 'utf8');
    const next = (offset: number) =>
      write(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
        // A log destination that fails (a closed pipe) must not take the service down: drop the batch.
        if (error === null && offset + written < bytes.length) return next(offset + written);
        writing = false;
        drain();
      });
    next(0);
  };

  const schedule = (): void => {
    timer ??= setTimeout(() => {
      timer = undefined;
      drain();
    }, flushMs).unref();
  };

  return {
    write(line) {
      pending.push(line);
      pendingChars += line.length;
      if (pendingChars >= batchChars) drain();
      else schedule();
    },
    flush(done) {
      if (done !== undefined) waiting.push(done);
      drain();
    },
    flushSync() {
      if (pending.length === 0) return;
      const bytes = Buffer.from(take(), 'utf8');
      try {
        for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
      } catch {
        // At exit, with the destination gone, there is nobody left to tell.
      }
    },
  };
}
