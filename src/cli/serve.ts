// `reports serve`: the server, until SIGTERM/SIGINT (what `make run` starts).
import { ConfigError, loadConfig } from '../config.js';
import { createLogger, flushLogger } from '../logger.js';
import { startServer } from '../server.js';
import { stringOption, UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

export const serveCommand = {
  name: 'serve',
  usage: 'reports serve [--host HOST] [--port PORT] [--data-dir DIR]',
  description: [
    'Runs the HTTP service. Configured by the environment (see README: PORT, HOST, REPORTS_TOKENS,',
    'REPORTS_DATA_DIR, KAFKA_BROKERS, ...); the flags override their variables.',
    'SIGTERM or SIGINT stops accepting, finishes requests in flight, flushes and releases the log, exits 0.',
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
      if (error instanceof ConfigError) throw new UsageError(`bad --${flag} (${variable}): ${error.reason}`, serveCommand.usage);
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

export async function runServe(parsed: ParsedCommand, io: CliIo): Promise<number> {
  checkFlags(parsed);
  const env = withFlags(io.env, { HOST: stringOption(parsed, 'host'), PORT: stringOption(parsed, 'port'), REPORTS_DATA_DIR: stringOption(parsed, 'data-dir') });
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`report-store: bad setting ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const logger = createLogger(config.logLevel, io.stdout);
  try {
    const server = await startServer(config, { logger, announce: (line) => io.stdout.write(`${line}\n`) });
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    logger.info('stopping: finishing requests in flight');
    await server.close();
    logger.info('stopped');
    return 0;
  } finally {
    await flushLogger(logger);
  }
}
