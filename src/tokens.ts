// Where the accepted tokens come from: REPORTS_TOKENS, REPORTS_TOKENS_FILE, or — with neither — a
// random token created on first start in the data directory (mode 0600) and printed once, so a
// first run works without set-up and is never open to anyone.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkToken, ConfigError, type Config } from './config.js';

export interface TokenSource {
  readonly entries: readonly string[];
  /** Set when the token was generated on this start (to be printed once). */
  readonly generatedToken?: string;
  readonly generatedPath?: string;
}

async function tokensFromFile(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError('REPORTS_TOKENS_FILE', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const entries = text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  for (const entry of entries) checkToken(entry, 'REPORTS_TOKENS_FILE');
  if (entries.length === 0) throw new ConfigError('REPORTS_TOKENS_FILE', `${path} holds no token`);
  return entries;
}

export async function resolveTokens(config: Pick<Config, 'tokens' | 'tokensFile' | 'dataDir'>): Promise<TokenSource> {
  const entries = [...config.tokens, ...(config.tokensFile ? await tokensFromFile(config.tokensFile) : [])];
  if (entries.length > 0) return { entries };
  const path = join(config.dataDir, 'token');
  try {
    const saved = (await readFile(path, 'utf8')).trim();
    if (saved === '') throw new ConfigError('REPORTS_TOKENS', `the saved token file ${path} is empty; delete it to have a new token generated`);
    return { entries: [saved] };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const token = randomBytes(32).toString('base64url');
  // 'wx': never overwrite a token another start wrote in the meantime.
  await writeFile(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { entries: [token], generatedToken: token, generatedPath: path };
}
