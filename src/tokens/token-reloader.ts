// Reloading the tokens without a restart: on a request (SIGHUP) and when the tokens file changes.
// Each reload reads and parses the file as a start does (the `load` it is given) and swaps the
// whole set in at once; a request reads the set once, when it is authorised, so one in flight
// finishes as it began and the next one sees the new set. A file that does not parse changes
// nothing: the set in use stays, and one line says why.
import { statSync, watch as fsWatch, type FSWatcher, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { hasChanged, tokenChange } from './token-change.js';
import type { CurrentTokens, TokenSet } from './token-set.js';

/** The trigger of a reload that a change of the file started. */
export const FILE_CHANGE = 'file change';
/** Events of the file come in bursts (an editor truncates, writes, renames): one reload after the last. */
const DEBOUNCE_MS = 100;

/** Reloads since start, for /metrics. */
export interface TokenReloadFigures {
  readonly reloads: number;
  readonly failures: number;
  /** Whether the last reload put its file's tokens in use (true before any). */
  readonly lastSucceeded: boolean;
}

export interface TokenReloader {
  /** Reads the tokens again; resolves with whether the file's tokens are in use. Reloads run one at a time, in the order asked. */
  reload(trigger: string): Promise<boolean>;
  figures(): TokenReloadFigures;
  /** Stops watching the file (a reload under way finishes). */
  close(): void;
}

export interface TokenReloaderDeps {
  readonly tokens: CurrentTokens;
  /** The tokens, read and parsed again from the configuration. */
  readonly load: () => Promise<TokenSet>;
  readonly logger: Logger;
  /** The file to watch for changes; none: reloads come only from reload(). */
  readonly watchPath?: string;
  readonly debounceMs?: number;
}

export function startTokenReloader({
  tokens,
  load,
  logger,
  watchPath,
  debounceMs = DEBOUNCE_MS,
}: TokenReloaderDeps): TokenReloader {
  const figures = { reloads: 0, failures: 0, lastSucceeded: true };
  let queue: Promise<unknown> = Promise.resolve();

  const reloadNow = async (trigger: string): Promise<boolean> => {
    figures.reloads += 1;
    let next: TokenSet;
    try {
      next = await load();
    } catch (error) {
      figures.failures += 1;
      figures.lastSucceeded = false;
      // The errors of parsing name the file and line, never a field's text (token-lines.ts).
      const reason = error instanceof Error ? error.message : String(error);
      logger.error(
        { trigger, reason, tokens: tokens.current.size },
        `tokens not reloaded (${trigger}): ${reason}; the ${tokens.current.size} tokens in use are kept`,
      );
      return false;
    }
    figures.lastSucceeded = true;
    const change = tokenChange(tokens.current, next);
    if (!hasChanged(change)) {
      // The set in use stays (and with it the tokens it has verified). A file event that changed
      // nothing (a touch, an editor's second write) is not worth a line; a SIGHUP gets its answer.
      logger[trigger === FILE_CHANGE ? 'debug' : 'info']({ trigger, ...change }, 'tokens reloaded: nothing changed');
      return true;
    }
    tokens.current = next;
    logger.info({ trigger, ...change }, 'tokens reloaded');
    return true;
  };

  const reload = (trigger: string): Promise<boolean> => {
    const run = queue.then(() => reloadNow(trigger));
    queue = run.catch(() => undefined);
    return run;
  };

  const watcher =
    watchPath === undefined ? undefined : watchFile(watchPath, debounceMs, () => void reload(FILE_CHANGE), logger);
  return { reload, figures: () => ({ ...figures }), close: () => watcher?.close() };
}

/**
 * Calls `changed` once a burst of events for `path` has settled. The directory is watched rather
 * than the file: an editor that saves by writing a new file and renaming it over the old one
 * replaces the inode a watch of the file would follow. Other files of the directory (the log, when
 * the file is the data directory's `token`) are told apart by name, except the `..`-prefixed ones a
 * Kubernetes volume swaps to replace all its files at once.
 */
function watchFile(
  path: string,
  debounceMs: number,
  changed: () => void,
  logger: Logger,
): { close(): void } | undefined {
  const name = basename(path);
  const dir = dirname(path);
  let timer: NodeJS.Timeout | undefined;
  const settle = () => {
    clearTimeout(timer);
    timer = setTimeout(changed, debounceMs);
    timer.unref();
  };
  const open = (): FSWatcher => {
    // Not persistent: a watch never keeps the process alive.
    const watcher = fsWatch(dir, { persistent: false }, (_event, filename) => {
      if (filename !== null && filename !== name && !filename.startsWith('..')) return;
      settle();
    });
    watcher.on('error', (error: NodeJS.ErrnoException) => {
      logger.warn({ path, code: error.code }, 'stopped watching the tokens file for changes; reload it with SIGHUP');
      watcher.close();
    });
    return watcher;
  };
  let watcher: FSWatcher;
  let watched: string;
  try {
    watched = directoryId(dir);
    watcher = open();
  } catch (error) {
    logger.warn(
      { path, code: (error as NodeJS.ErrnoException).code },
      'cannot watch the tokens file for changes; reload it with SIGHUP',
    );
    return undefined;
  }
  // A watch follows the directory it was given, also once renamed away: a directory put in its place
  // (configuration management replacing /etc/reports) went unseen, and no reload came again.
  let checking = false;
  let closed = false;
  const check = async () => {
    const now = await stat(dir).then(
      (stats) => idOf(stats),
      () => undefined, // Gone for now: looked for again at the next tick.
    );
    if (closed || now === undefined || now === watched) return;
    watcher.close();
    // Once per directory put in place, whether its watch opens or not (a warning, not one a second).
    watched = now;
    try {
      watcher = open();
      settle();
    } catch (error) {
      logger.warn(
        { path, code: (error as NodeJS.ErrnoException).code },
        'cannot watch the tokens file for changes; reload it with SIGHUP',
      );
    }
  };
  const replaced = setInterval(() => {
    if (checking) return;
    checking = true;
    void check().finally(() => (checking = false));
  }, DIRECTORY_CHECK_MS);
  replaced.unref();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(replaced);
      watcher.close();
    },
  };
}

/** How often the watch looks whether its directory was replaced. */
const DIRECTORY_CHECK_MS = 1000;

/** The directory at `dir` now (at start). */
function directoryId(dir: string): string {
  return idOf(statSync(dir));
}

/** Device, inode and birth time: ext4 gives a directory made again at once the inode of the one removed. */
function idOf({ dev, ino, birthtimeMs }: Stats): string {
  return `${dev}:${ino}:${birthtimeMs}`;
}
