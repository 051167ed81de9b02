#!/usr/bin/env node
// The `reports` command: the composition root of the CLI. Each subcommand lives in its own file;
// this one only dispatches, maps errors to exit codes (2: usage, 1: failure) and wires signals.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config.js';
import { processReloadSignal, processStopSignal } from '../process-signals.js';
import { dropKafkajsNegativeTimeouts } from '../process-warnings.js';
import { helpText, parseCommand, UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

type Run = (parsed: ParsedCommand, io: CliIo) => number | Promise<number>;
interface Command {
  readonly summary: string;
  /** Each subcommand's module is loaded only when it runs: `reports serve` loads no tool's code (nor kafkajs). */
  readonly load: () => Promise<{ readonly spec: CommandSpec; readonly run: Run }>;
}

const commands: ReadonlyMap<string, Command> = new Map<string, Command>([
  [
    'serve',
    {
      summary: 'run the HTTP service',
      load: async () => import('./serve.js').then((m) => ({ spec: m.serveCommand, run: m.runServe })),
    },
  ],
  [
    'events',
    {
      summary: 'print the log as NDJSON, optionally following it',
      load: async () => import('./events.js').then((m) => ({ spec: m.eventsCommand, run: m.runEvents })),
    },
  ],
  [
    'replay',
    {
      summary: 'fold the history and print counts and the state digest',
      load: async () => import('./replay.js').then((m) => ({ spec: m.replayCommand, run: m.runReplay })),
    },
  ],
  [
    'verify',
    {
      summary: 'check every frame, event and fold rule of the log',
      load: async () => import('./verify.js').then((m) => ({ spec: m.verifyCommand, run: m.runVerify })),
    },
  ],
  [
    'snapshot',
    {
      summary: 'write a snapshot of the read model',
      load: async () => import('./snapshot.js').then((m) => ({ spec: m.snapshotCommand, run: m.runSnapshot })),
    },
  ],
  [
    'backup',
    {
      summary: 'take an online, verified backup of the embedded log',
      load: async () => import('./backup.js').then((m) => ({ spec: m.backupCommand, run: m.runBackup })),
    },
  ],
  [
    'restore',
    {
      summary: "put a backup in place of a stopped server's log",
      load: async () => import('./restore.js').then((m) => ({ spec: m.restoreCommand, run: m.runRestore })),
    },
  ],
  [
    'seal-history',
    {
      summary: 'seal every create written in the clear (before erasure) in a stopped embedded log',
      load: async () =>
        import('./seal-history.js').then((m) => ({ spec: m.sealHistoryCommand, run: m.runSealHistory })),
    },
  ],
  [
    'migrate',
    {
      summary:
        'copy the embedded log into Kafka (--to-kafka), a topic into a new one (--to-topic NAME: repartitioning) or into an embedded log (--to-file DIR), its content sealed anew; resumable',
      load: async () => import('./migrate.js').then((m) => ({ spec: m.migrateCommand, run: m.runMigrate })),
    },
  ],
  [
    'schema',
    {
      summary: 'print the event JSON Schemas, the OpenAPI document or the AsyncAPI document of the topic',
      load: async () => import('./schema.js').then((m) => ({ spec: m.schemaCommand, run: m.runSchema })),
    },
  ],
]);

const USAGE = 'reports <command> [options]   (reports <command> --help for each)';

function overview(): string {
  const lines = [...commands].map(([name, { summary }]) => `  ${name.padEnd(12)} ${summary}`);
  return `usage: ${USAGE}\n\nCommands:\n${lines.join('\n')}\n\nConfigured by the same environment variables as the server (see README).\n`;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(overview());
    return name === undefined ? 2 : 0;
  }
  const command = commands.get(name);
  if (!command) {
    io.stderr.write(`reports: unknown command "${name}"\nusage: ${USAGE}\n`);
    return 2;
  }
  try {
    const { spec, run } = await command.load();
    const parsed = parseCommand(spec, args);
    if (parsed.help) {
      io.stdout.write(helpText(spec));
      return 0;
    }
    return await run(parsed, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`reports ${name}: ${error.message}\nusage: ${error.usage}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.stderr.write(`reports ${name}: bad setting ${error.message}\n`);
      return 2;
    }
    io.stderr.write(`reports ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** True when this file is the process entry point (run directly or through the npm bin link), not imported. */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  dropKafkajsNegativeTimeouts();
  const signal = processStopSignal();
  // SIGHUP reloads the server's tokens; every other command ends on it, as a tool does.
  const reload = process.argv[2] === 'serve' ? processReloadSignal() : undefined;
  // `reports events | head`: the reader went away. Exit as a tool killed by SIGPIPE does (128 + 13),
  // without Node's stack trace for an unhandled 'error' event.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(141);
  });
  runCli(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal,
    ...(reload ? { reload } : {}),
  }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`reports: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
