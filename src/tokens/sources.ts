// Where the accepted tokens come from: REPORTS_TOKENS, REPORTS_TOKENS_FILE, or — with neither — the
// data directory's `token`, created on first start with one random token (mode 0600) and printed
// once, so a first run works without set-up and is never open to anyone. The file (the configured
// one, or `token`) takes the same lines either way and is what a reload reads again.
import { hash, randomBytes } from 'node:crypto';
import { link, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, syncDir } from '../data-dir/data-dir.js';
import { NotRegularFileError, openRegularFile } from '../regular-file.js';
import { ALL_SCOPES } from './scopes.js';
import { parseTokenLines, type TokenFileOrigin } from './token-lines.js';
import { createTokenSet, type TokenSet, type TokenSpec } from './token-set.js';

/** saveToken's temporary name in the data directory, its writer's pid first. */
const TOKEN_TEMPORARY = /^token\.new-\d+-[0-9a-f]{8}$/;
/** Older than this, such a file's writer is gone: a start writes it in milliseconds. */
const LEFT_TOKEN_FILE_AGE_MS = 60_000;

/** A token created on this start, to be shown once. */
export interface GeneratedToken {
  readonly path: string;
  readonly token: string;
}

/**
 * What a start that created the token says about it. The token itself only on a terminal, where a
 * person reads it once: anywhere else the output is collected (`docker compose logs`, journald, a
 * log shipper) and would keep the secret, so only the file is named.
 */
export function tokenNotice({ path, token }: GeneratedToken, { terminal }: { terminal: boolean }): string {
  const created = `No token configured: created one and saved it in ${path} (mode 0600).`;
  if (!terminal) return `${created} It is not printed here, where output may be collected; read it from the file.\n`;
  return `${created} It is shown only this once:\n  Authorization: Bearer ${token}\n`;
}

/** The file a server's tokens are read from, again at each reload. */
export interface TokensFile extends TokenFileOrigin {
  /** The data directory's `token`, which a start creates when it is missing. */
  readonly generated: boolean;
}

/** REPORTS_TOKENS_FILE; else the data directory's `token` when REPORTS_TOKENS is not set either; else none (REPORTS_TOKENS alone, read at start only). */
export function tokensFileOf(config: Pick<Config, 'tokens' | 'tokensFile' | 'dataDir'>): TokensFile | undefined {
  if (config.tokensFile !== undefined)
    return { path: config.tokensFile, variable: 'REPORTS_TOKENS_FILE', generated: false };
  if (config.tokens.length > 0) return undefined;
  return { path: join(config.dataDir, 'token'), variable: 'REPORTS_TOKENS', generated: true };
}

export interface TokenSource {
  readonly set: TokenSet;
  /** Set when the token was generated on this start (to be announced once). */
  readonly generated?: GeneratedToken;
  readonly file?: TokensFile;
  /** Which file was read (device and inode), for a reload to tell it from another put in its place. */
  readonly read?: TokensFileRead;
}

/**
 * A plain token shorter than this gets a warning: the 66 characters a bearer token may hold carry
 * about 6 bits each, so a shorter one cannot hold 128 random bits (a generated token has 43
 * characters, 256 bits). Not refused: it may be what a deployment already relies on.
 */
export const SHORT_TOKEN_CHARS = 22;

/** Warns, naming where it is configured (never the token), about each plain token too short to be safe. */
export function warnShortTokens(
  specs: readonly Pick<TokenSpec, 'token' | 'origin' | 'variable'>[],
  logger: Logger | undefined,
): void {
  for (const { token, origin, variable } of specs) {
    if (token.startsWith('sha256:') || token.length >= SHORT_TOKEN_CHARS) continue;
    logger?.warn(
      { variable, where: origin, characters: token.length },
      `${origin}: a token shorter than ${SHORT_TOKEN_CHARS} characters, easy to guess; use a random one (openssl rand -base64 32)`,
    );
  }
}

/** The entries of a comma-separated variable (REPORTS_TOKENS, REPORTS_METRICS_TOKEN): unnamed, every scope. */
export function variableSpecs(tokens: readonly string[], variable: string): TokenSpec[] {
  return tokens.map((token, index) => ({
    token,
    scopes: ALL_SCOPES,
    origin: `${variable} entry ${index + 1}`,
    variable,
  }));
}

/** Why a file's last line may be a write in progress: it has no newline at its end. */
const CUT_SHORT =
  'its last line has no newline at its end, in the file read before, changed since: a write in progress? (a line cut short can make a token of a name, or of the first characters of a token)';

/** Which file a read found (device and inode), and what it held (a digest). */
export interface TokensFileRead {
  readonly file: string;
  readonly content: string;
}

/** A tokens file read: its tokens, and which file with what content. */
interface ReadTokens {
  readonly specs: TokenSpec[];
  readonly read: TokensFileRead;
}

/** Whether `text` ends inside a line that holds more than blanks. */
function endsInsideALine(text: string): boolean {
  return text.slice(text.lastIndexOf('\n') + 1).trim() !== '';
}

/**
 * Reads the file. `readBefore`, for a reload: what the last good read found. A last line without
 * a newline in that same file, changed since, may be a write in progress (an append paused
 * halfway), and is refused; in another file (renamed into place, a Kubernetes volume's swap) it is
 * whole, and so it is in the file as it was (a SIGHUP with nothing changed).
 */
async function readTokensFile(
  file: TokensFile,
  logger: Logger | undefined,
  readBefore?: TokensFileRead,
): Promise<ReadTokens> {
  let text: string;
  let read: TokensFileRead;
  try {
    // Not a plain readFile: a FIFO put at the path blocked its open in one of libuv's threads for
    // ever, every later reload queued behind it, and the process could not exit.
    const handle = await openRegularFile(file.path);
    try {
      const { dev, ino } = await handle.stat();
      const bytes = await handle.readFile();
      text = bytes.toString('utf8');
      read = { file: `${dev}:${ino}`, content: hash('sha256', bytes) };
    } finally {
      await handle.close();
    }
  } catch (error) {
    const reason =
      error instanceof NotRegularFileError
        ? `it is ${error.kind}, not a regular file`
        : ((error as NodeJS.ErrnoException).code ?? 'error');
    throw new ConfigError(file.variable, `cannot read ${file.path}: ${reason}`);
  }
  const changedInPlace = readBefore?.file === read.file && readBefore.content !== read.content;
  if (changedInPlace && endsInsideALine(text))
    throw new ConfigError(file.variable, `${file.path}: ${CUT_SHORT}; end it with a newline`);
  const lines = parseTokenLines(text, file);
  if (lines.length === 0)
    throw new ConfigError(
      file.variable,
      `${file.path} holds no token${file.generated ? '; delete it to have a new token generated at the next start' : ''}`,
    );
  const mode = (await stat(file.path)).mode & 0o777;
  if ((mode & 0o077) !== 0)
    logger?.warn(
      { path: file.path, mode: mode.toString(8) },
      `${file.path} is readable by other users (group or others); chmod 600 it`,
    );
  const specs = lines.map(({ line, ...rest }) => ({
    ...rest,
    origin: `${file.path} line ${line}`,
    variable: file.variable,
  }));
  warnShortTokens(specs, logger);
  return { specs, read };
}

/**
 * Writes the generated token durably: the whole file under a name of its own, then linked to its
 * name and its directory entry synced. A write that fails (a full disk) leaves no `token` behind:
 * an empty one would stop every later start until someone deleted it.
 */
async function saveToken(dataDir: string, path: string, token: string): Promise<void> {
  await ensurePrivateDir(dataDir);
  // TOKEN_TEMPORARY: a start removes it when its writer was killed.
  const temporary = `${path}.new-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const file = await open(temporary, 'wx', PRIVATE_FILE_MODE);
    try {
      await file.writeFile(`${token}\n`);
      // Without this an OS crash could leave the name on an empty file.
      await file.sync();
    } finally {
      await file.close();
    }
    // link, not rename: never over a token another start wrote in the meantime (EEXIST).
    await link(temporary, path);
  } catch (error) {
    throw new Error(`could not write the generated token to ${path}: ${(error as Error).message}`, { cause: error });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  await syncDir(dataDir);
}

/**
 * Removes what a start killed while it wrote the token left (saveToken's temporary name, holding
 * the token). By age, not by its writer's pid: this runs before the data directory's lock, and a
 * start in another pid namespace (a second container on the volume) may be writing one now. A file
 * that cannot be removed (a read-only directory) is left, never a reason to stop.
 */
async function removeLeftTokenFiles(dataDir: string, logger: Logger | undefined): Promise<void> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!TOKEN_TEMPORARY.test(name)) continue;
    const path = join(dataDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined || Date.now() - info.mtimeMs < LEFT_TOKEN_FILE_AGE_MS) continue;
    await unlink(path).then(
      () => logger?.info({ path }, 'removed a token file left by a start that was killed'),
      () => undefined,
    );
  }
}

async function missing(path: string): Promise<boolean> {
  try {
    await stat(path);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/** The tokens at start: the variable's, then the file's; the data directory's `token` is created when it is the file and missing. */
export async function resolveTokens(
  config: Pick<Config, 'tokens' | 'tokensFile' | 'dataDir'>,
  { logger }: { logger?: Logger } = {},
): Promise<TokenSource> {
  const fromVariable = variableSpecs(config.tokens, 'REPORTS_TOKENS');
  warnShortTokens(fromVariable, logger);
  const file = tokensFileOf(config);
  if (file === undefined) return { set: createTokenSet(fromVariable) };
  if (file.generated) await removeLeftTokenFiles(config.dataDir, logger);
  if (file.generated && (await missing(file.path))) {
    const token = randomBytes(32).toString('base64url');
    await saveToken(config.dataDir, file.path, token);
    return {
      set: createTokenSet([{ token, scopes: ALL_SCOPES, origin: `${file.path} line 1`, variable: file.variable }]),
      generated: { path: file.path, token },
      file,
    };
  }
  const { specs, read } = await readTokensFile(file, logger);
  return { set: createTokenSet([...fromVariable, ...specs]), file, read };
}

/**
 * The tokens again, for a reload: the file read and parsed as at start (the variable's as parsed
 * then; the environment cannot change). Never creates a file: a `token` deleted since the start is
 * an error, and the set in use stays.
 */
export async function reloadTokens(
  config: Pick<Config, 'tokens'>,
  file: TokensFile,
  { logger, readBefore }: { logger?: Logger; readBefore?: TokensFileRead } = {},
): Promise<{ set: TokenSet; read: TokensFileRead }> {
  const { specs, read } = await readTokensFile(file, logger, readBefore);
  return { set: createTokenSet([...variableSpecs(config.tokens, 'REPORTS_TOKENS'), ...specs]), read };
}
