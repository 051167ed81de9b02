// Argument parsing for every subcommand: node:util parseArgs (strict), with --help, and one
// error type that main.ts turns into exit code 2 plus a usage line.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ReloadRequests } from '../process-signals.js';

export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where a subcommand writes: injected so tests capture output in memory. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborts on SIGINT/SIGTERM, so long commands (`--follow`) end cleanly. */
  readonly signal: AbortSignal;
  /** Requests to reload the tokens (SIGHUP), for `reports serve`. */
  readonly reload?: ReloadRequests;
}

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

export interface CommandSpec {
  readonly name: string;
  readonly usage: string;
  readonly description: string;
  readonly options: OptionSpecs;
  readonly positionals?: { readonly min: number; readonly max: number };
}

export interface ParsedCommand {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
  readonly help: boolean;
}

export function parseCommand(spec: CommandSpec, args: readonly string[]): ParsedCommand {
  const options: OptionSpecs = { ...spec.options, help: { type: 'boolean', short: 'h' } };
  // Not strict: parseArgs' own messages read badly ("argument is ambiguous", unbalanced quotes), so
  // the tokens are checked here, with messages that name the option and say what to write.
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) if (token.kind === 'option') checkOption(token, options[token.name], spec.usage);
  const help = values['help'] === true;
  const { min = 0, max = 0 } = spec.positionals ?? {};
  if (!help && (positionals.length < min || positionals.length > max)) {
    throw new UsageError(
      positionals.length > max ? `unexpected argument "${positionals[max]}"` : 'missing argument',
      spec.usage,
    );
  }
  const single: Record<string, string | boolean | undefined> = {};
  for (const [key, value] of Object.entries(values)) single[key] = Array.isArray(value) ? value.at(-1) : value;
  return { values: single, positionals, help };
}

interface OptionToken {
  readonly rawName: string;
  readonly value?: string | undefined;
  readonly inlineValue?: boolean | undefined;
}

function checkOption(token: OptionToken, option: OptionSpecs[string] | undefined, usage: string): void {
  const { rawName, value, inlineValue } = token;
  if (option === undefined) throw new UsageError(`unknown option ${rawName}`, usage);
  if (option.type === 'boolean') {
    if (value !== undefined) throw new UsageError(`${rawName} takes no value, got "${value}"`, usage);
    return;
  }
  if (value === undefined) throw new UsageError(`${rawName} needs a value`, usage);
  // `--from -1` or `--from --follow`: the next argument looks like an option, so it may be one the
  // value was forgotten before. A value that starts with a dash is written with "=".
  if (inlineValue !== true && value.startsWith('-'))
    throw new UsageError(
      `${rawName} needs a value; to give one that starts with "-", write ${rawName}=${value}`,
      usage,
    );
}

export function stringOption(parsed: ParsedCommand, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function helpText(spec: { usage: string; description: string }): string {
  return `usage: ${spec.usage}\n\n${spec.description}\n`;
}
