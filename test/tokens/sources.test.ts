import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../src/config.js';
import { resolveTokens, tokenNotice } from '../src/tokens.js';
import { rejection } from './helpers/async.js';
import { memoryLogger, tempDir } from './helpers/server.js';

const HASH = `sha256:${'0f'.repeat(32)}`;

const tokens = suite<{ dir: string }>('resolveTokens');
tokens.before.each(async (context) => {
  context.dir = await tempDir('reports-tokens-');
});
tokens.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

tokens('takes the tokens from the environment and generates none', async ({ dir }) => {
  const source = await resolveTokens({ tokens: ['one', HASH], dataDir: dir });
  assert.equal(source, { entries: ['one', HASH] });
  assert.is(((await rejection(stat(join(dir, 'token')))) as NodeJS.ErrnoException).code, 'ENOENT');
});

tokens('reads a tokens file, skipping comments and blank lines', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, `# service accounts\n\n  alpha  \n${HASH}\n   # indented comment\nbeta\n`);
  assert.equal(await resolveTokens({ tokens: [], tokensFile: file, dataDir: dir }), { entries: ['alpha', HASH, 'beta'] });
});

tokens('joins the environment tokens and the file tokens', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, 'from-file\n');
  assert.equal((await resolveTokens({ tokens: ['from-env'], tokensFile: file, dataDir: dir })).entries, ['from-env', 'from-file']);
});

tokens('rejects a tokens file with a bad sha256 entry, naming REPORTS_TOKENS_FILE', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, 'good\nsha256:1234\n');
  const error = await rejection(resolveTokens({ tokens: [], tokensFile: file, dataDir: dir }));
  assert.instance(error, ConfigError);
  assert.is((error as ConfigError).variable, 'REPORTS_TOKENS_FILE');
});

tokens('rejects a tokens file that holds only comments', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, '# nobody yet\n\n');
  const error = await rejection(resolveTokens({ tokens: [], tokensFile: file, dataDir: dir }));
  assert.instance(error, ConfigError);
  assert.match((error as ConfigError).message, 'no token');
});

tokens('rejects a missing tokens file, naming REPORTS_TOKENS_FILE', async ({ dir }) => {
  const error = await rejection(resolveTokens({ tokens: [], tokensFile: join(dir, 'absent'), dataDir: dir }));
  assert.instance(error, ConfigError);
  assert.is((error as ConfigError).variable, 'REPORTS_TOKENS_FILE');
});

tokens('generates a token file with mode 0600 on the first start and reports the token', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  const source = await resolveTokens({ tokens: [], dataDir });
  const path = join(dataDir, 'token');
  assert.is(source.generated?.path, path);
  assert.type(source.generated?.token, 'string');
  assert.ok((source.generated?.token ?? '').length >= 32);
  assert.equal(source.entries, [source.generated?.token]);
  assert.is((await readFile(path, 'utf8')).trim(), source.generated?.token);
  assert.is((await stat(path)).mode & 0o777, 0o600);
});

tokens('reads the same token on the second start and generates nothing', async ({ dir }) => {
  const first = await resolveTokens({ tokens: [], dataDir: dir });
  const second = await resolveTokens({ tokens: [], dataDir: dir });
  assert.equal(second, { entries: [first.generated?.token] });
});

tokens('generates a different token for another data directory', async ({ dir }) => {
  const a = await resolveTokens({ tokens: [], dataDir: join(dir, 'a') });
  const b = await resolveTokens({ tokens: [], dataDir: join(dir, 'b') });
  assert.is.not(a.generated?.token, b.generated?.token);
});

tokens('refuses an empty saved token file instead of accepting an empty token', async ({ dir }) => {
  await writeFile(join(dir, 'token'), '\n', { mode: 0o600 });
  const error = await rejection(resolveTokens({ tokens: [], dataDir: dir }));
  assert.instance(error, ConfigError);
  assert.match((error as Error).message, 'delete it');
});

tokens('creates the data directory 0700 for the generated token', async ({ dir }) => {
  const dataDir = join(dir, 'fresh', 'data');
  await resolveTokens({ tokens: [], dataDir });
  assert.is((await stat(dataDir)).mode & 0o777, 0o700);
});

tokens('warns when REPORTS_TOKENS_FILE is readable by group or others', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, 'alpha\n', { mode: 0o644 });
  const { logger, lines } = memoryLogger();
  await resolveTokens({ tokens: [], tokensFile: file, dataDir: dir }, { logger });
  const warning = lines().find((line) => line['path'] === file);
  assert.is(warning?.['level'], 40);
  assert.is(warning?.['mode'], '644');
});

tokens('does not warn about a tokens file only its owner can read', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, 'alpha-0123456789-abcdefghij\n', { mode: 0o600 });
  const { logger, lines } = memoryLogger();
  await resolveTokens({ tokens: [], tokensFile: file, dataDir: dir }, { logger });
  assert.equal(lines(), []);
});

tokens('warns about each token shorter than 22 characters, naming its variable and place, never the token', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, `# tokens\nx\n${'f'.repeat(22)}\n`, { mode: 0o600 });
  const { logger, lines, text } = memoryLogger();
  await resolveTokens({ tokens: ['a'.repeat(21), 'b'.repeat(22), `sha256:${'0'.repeat(64)}`], tokensFile: file, dataDir: dir }, { logger });
  const warnings = lines().filter((line) => line['level'] === 40);
  assert.equal(
    warnings.map((line) => [line['variable'], line['entry'], line['characters']]),
    [
      ['REPORTS_TOKENS', 1, 21],
      ['REPORTS_TOKENS_FILE', 1, 1],
    ],
  );
  assert.not.match(text(), 'a'.repeat(21));
});

tokens('does not warn about a generated token', async ({ dir }) => {
  const { logger, lines } = memoryLogger();
  await resolveTokens({ tokens: [], dataDir: dir }, { logger });
  assert.equal(lines(), []);
});

const notice = suite('tokenNotice');

notice('on a terminal shows the token once, with the header to send', () => {
  const text = tokenNotice({ path: 'data/token', token: 'secret-token' }, { terminal: true });
  assert.match(text, 'saved it in data/token (mode 0600)');
  assert.match(text, '  Authorization: Bearer secret-token\n');
});

notice('anywhere else names the file and not the token', () => {
  const text = tokenNotice({ path: 'data/token', token: 'secret-token' }, { terminal: false });
  assert.match(text, 'saved it in data/token (mode 0600)');
  assert.not.match(text, 'secret-token');
});

tokens.run();
notice.run();
