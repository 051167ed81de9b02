// Where the accepted tokens come from: REPORTS_TOKENS, REPORTS_TOKENS_FILE, or — with neither — a
// random token created on first start in the data directory (mode 0600) and printed once, so a
// first run works without set-up and is never open to anyone.
import { randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { checkToken, ConfigError, type Config } from './config.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, syncDir } from './log/file/data-dir.js';

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

export interface TokenSource {
  readonly entries: readonly string[];
  /** Set when the token was generated on this start (to be announced once). */
  readonly generated?: GeneratedToken;
}

async function tokensFromFile(path: string, logger: Logger | undefined): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError('REPORTS_TOKENS_FILE', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const entries = text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  for (const entry of entries) checkToken(entry, 'REPORTS_TOKENS_FILE');
  if (entries.length === 0) throw new ConfigError('REPORTS_TOKENS_FILE', `${path} holds no token`);
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    logger?.warn({ path, mode: mode.toString(8) }, 'REPORTS_TOKENS_FILE is readable by other users (group or others); chmod 600 it');
  }
  return entries;
}

/** Writes the generated token durably: the file and then its directory entry. */
async function saveToken(dataDir: string, path: string, token: string): Promise<void> {
  await ensurePrivateDir(dataDir);
  // 'wx': never overwrite a token another start wrote in the meantime.
  const file = await open(path, 'wx', PRIVATE_FILE_MODE);
  try {
    await file.writeFile(`${token}\n`);
    // Without this an OS crash can leave an empty token file, which stops every later start.
    await file.sync();
  } finally {
    await file.close();
  }
  await syncDir(dataDir);
}

/**
 * A plain token shorter than this gets a warning at start: the 66 characters a bearer token may
 * hold carry about 6 bits each, so a shorter one cannot hold 128 random bits (a generated token has
 * 43 characters, 256 bits). Not refused: it may be what a deployment already relies on.
 */
export const SHORT_TOKEN_CHARS = 22;

/** Warns, naming the variable and the entry's place (never the token), about each plain token too short to be safe. */
export function warnShortTokens(entries: readonly string[], variable: string, logger: Logger | undefined): void {
  for (const [index, entry] of entries.entries()) {
    if (entry.startsWith('sha256:') || entry.length >= SHORT_TOKEN_CHARS) continue;
    logger?.warn({ variable, entry: index + 1, characters: entry.length }, `a token of ${variable} is shorter than ${SHORT_TOKEN_CHARS} characters, easy to guess; use a random one (openssl rand -base64 32)`);
  }
}

export async function resolveTokens(config: Pick<Config, 'tokens' | 'tokensFile' | 'dataDir'>, { logger }: { logger?: Logger } = {}): Promise<TokenSource> {
  const fromFile = config.tokensFile ? await tokensFromFile(config.tokensFile, logger) : [];
  warnShortTokens(config.tokens, 'REPORTS_TOKENS', logger);
  warnShortTokens(fromFile, 'REPORTS_TOKENS_FILE', logger);
  const entries = [...config.tokens, ...fromFile];
  if (entries.length > 0) return { entries };
  const path = join(config.dataDir, 'token');
  try {
    const saved = (await readFile(path, 'utf8')).trim();
    if (saved === '') throw new ConfigError('REPORTS_TOKENS', `the saved token file ${path} is empty; delete it to have a new token generated`);
    return { entries: [saved] };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  await saveToken(config.dataDir, path, token);
  return { entries: [token], generated: { path, token } };
}
