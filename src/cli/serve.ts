// `reports serve`: the server, until SIGTERM/SIGINT (what `make run` starts).
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { settleWithin } from '../log/settle-within.js';
import type { RunningServer } from '../server.js';
import { checkStartSettings } from '../start-checks.js';
import { formatCursor, logKind } from '../log/positions.js';
import { stringOption, UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

export const serveCommand = {
  name: 'serve',
  usage: 'reports serve [--host HOST] [--port PORT] [--data-dir DIR]',
  description: [
    'Runs the HTTP service. Configured by the environment (see README: PORT, HOST, REPORTS_TOKENS,',
    'REPORTS_DATA_DIR, KAFKA_BROKERS, ...); the flags override their variables.',
    'SIGTERM or SIGINT stops accepting, finishes requests in flight, flushes and releases the log, exits 0;',
    'during the start it stops the start; a second one exits at once. A bad setting exits 2 naming the variable.',
    'SIGHUP (and a change of the tokens file) reloads the tokens; a file that does not parse keeps those in use.',
  ].join('\n'),
  options: { host: { type: 'string' }, port: { type: 'string' }, 'data-dir': { type: 'string' } },
} satisfies CommandSpec;

/** The variable each flag stands for. */
const FLAG_VARIABLES = { host: 'HOST', port: 'PORT', 'data-dir': 'REPORTS_DATA_DIR' } as const;

/** A bad flag value is a usage error (the usage line follows), where the same value in the environment is a bad setting. */
function checkFlags(parsed: ParsedCommand): void {
  for (const [flag, variable] of Object.entries(FLAG_VARIABLES)) {
    const value = stringOption(parsed, flag);
    if (value === undefined) continue;
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      if (error instanceof ConfigError)
        throw new UsageError(`bad --${flag} (${variable}): ${error.reason}`, serveCommand.usage);
      throw error;
    }
  }
}

/** Applies command-line flags on top of the environment (flags mirror variables). */
export function withFlags(env: CliIo['env'], flags: Record<string, string | undefined>): CliIo['env'] {
  const merged: Record<string, string | undefined> = { ...env };
  for (const [variable, value] of Object.entries(flags)) if (value !== undefined) merged[variable] = value;
  return merged;
}

/** How long a start interrupted by a signal may still take to finish, so its lock is released; past it the process just exits. */
const INTERRUPTED_START_GRACE_MS = 2000;

export async function runServe(parsed: ParsedCommand, io: CliIo): Promise<number> {
  checkFlags(parsed);
  const env = withFlags(io.env, {
    HOST: stringOption(parsed, 'host'),
    PORT: stringOption(parsed, 'port'),
    REPORTS_DATA_DIR: stringOption(parsed, 'data-dir'),
  });
  let config: Config;
  try {
    // Parsed, and what only the machine can tell checked, before the server's code is loaded: a bad
    // setting is reported at once.
    config = loadConfig(env);
    // A stop is honoured here too: a resolver that does not answer must not hold a SIGTERM.
    if ((await unlessStopped(checkStartSettings(config), io.signal)) === STOPPED || io.signal.aborted) return 0;
  } catch (error) {
    return badSetting(error, io);
  }
  const { createLogger, flushLogger } = await import('../logger.js');
  const logger = createLogger(config.logLevel, io.stdout);
  let fatal: Error | undefined;
  const stopOnFatal = new AbortController();
  try {
    const server = await startUnlessStopped(config, logger, io, (error) => {
      fatal = error;
      stopOnFatal.abort();
    });
    if (server === undefined) return 0;
    await stopRequested(AbortSignal.any([io.signal, stopOnFatal.signal]));
    logger.info(fatal === undefined ? 'stopping: finishing requests in flight' : 'stopping: the server cannot go on');
    const { digest } = await server.close();
    if (fatal !== undefined) {
      io.stderr.write(`reports serve: ${fatal.message}\n`);
      return 1;
    }
    // What this instance had folded, digested as `reports replay` does: instances sharing a topic
    // (and a fault test) compare their read models without a query that could change them.
    const { cursor, reports } = server.projector.model;
    logger.info(
      {
        position: formatCursor(cursor, logKind(config)),
        ...(digest === undefined ? {} : { digest }),
        liveReports: reports.size,
      },
      'stopped',
    );
    return 0;
  } catch (error) {
    return badSetting(error, io);
  } finally {
    await flushLogger(logger);
  }
}

/** One line naming the variable and exit code 2 for a bad setting; anything else is not one. */
function badSetting(error: unknown, io: CliIo): number {
  if (!(error instanceof ConfigError)) throw error;
  io.stderr.write(`report-store: bad setting ${error.message}\n`);
  return 2;
}

function stopRequested(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

const STOPPED: unique symbol = Symbol('stopped');

/** What `work` gives, or STOPPED when a stop is asked for first (then `work` is left to finish, its failure ignored). */
function unlessStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  work.catch(() => undefined);
  return Promise.race([work, stopRequested(signal).then((): typeof STOPPED => STOPPED)]);
}

/**
 * The started server, or undefined when a stop was asked for first: a signal is honoured at any
 * moment of the start, also while it waits on something that may never answer (a broker away).
 */
async function startUnlessStopped(
  config: Config,
  logger: Logger,
  io: CliIo,
  onFatal: (error: Error) => void,
): Promise<RunningServer | undefined> {
  const [{ startServer }, { tokenNotice }] = await Promise.all([
    import('../server.js'),
    import('../tokens/sources.js'),
  ]);
  if (io.signal.aborted) return undefined;
  // On stderr, not among the JSON lines of stdout that a log collector takes (tokens are never logged).
  const starting = startServer(config, {
    logger,
    announceToken: (generated) => io.stderr.write(tokenNotice(generated, { terminal: io.stderr.isTTY === true })),
    onFatal,
    settingsChecked: true,
    ...(io.reload ? { reloadRequests: io.reload } : {}),
  });
  const first = await unlessStopped(starting, io.signal);
  if (first !== STOPPED) return first;
  logger.info('stopping: a signal arrived during the start');
  // A start that completes soon is closed properly (its lock released); one still stuck is left to the exit.
  let late: RunningServer | undefined;
  await settleWithin(
    INTERRUPTED_START_GRACE_MS,
    starting.then((server) => (late = server)),
  );
  await late?.close();
  return undefined;
}
