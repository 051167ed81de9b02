import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../src/config.js';
import { reloadTokens, resolveTokens, tokenNotice, tokensFileOf, type TokenSource } from '../../src/tokens/sources.js';
import { tokenDigest } from '../../src/tokens/token-set.js';
import { rejection } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const HASHED = 'hashed-token-0123456789abcdef';
const HASH = `sha256:${tokenDigest(HASHED).toString('hex')}`;

/** Which of `tokens` the source's set accepts, and each one's name and scopes. */
function grants(source: TokenSource | { set: TokenSource['set'] }, tokens: readonly string[]) {
  return Object.fromEntries(
    tokens.map((token) => {
      const grant = source.set.grantFor(token);
      return [token, grant === undefined ? null : { name: grant.name ?? null, scopes: [...grant.scopes].sort() }];
    }),
  );
}
const EVERY = { name: null, scopes: ['read', 'write'] };

const tokens = suite<{ dir: string }>('resolveTokens');
tokens.before.each(async (context) => {
  context.dir = await tempDir('reports-tokens-');
});
tokens.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

tokens('takes the tokens from the environment, each with every scope, and generates none', async ({ dir }) => {
  const source = await resolveTokens({ tokens: ['one', HASH], dataDir: dir });
  assert.equal(grants(source, ['one', HASHED, 'other']), { one: EVERY, [HASHED]: EVERY, other: null });
  assert.is(source.file, undefined, 'REPORTS_TOKENS alone: no file to reload');
  assert.is(((await rejection(stat(join(dir, 'token')))) as NodeJS.ErrnoException).code, 'ENOENT');
});

tokens(
  'removes the token file a start killed while writing it left (a minute old), and keeps one a start may be writing now',
  async ({ dir }) => {
    const stale = join(dir, 'token.new-4194303-0a1b2c3d');
    const live = join(dir, 'token.new-1-0a1b2c3d');
    await writeFile(stale, 'a token\n');
    await writeFile(live, 'another\n');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(stale, twoMinutesAgo, twoMinutesAgo);
    const source = await resolveTokens({ tokens: [], dataDir: dir });
    assert.ok(source.generated !== undefined);
    assert.is(((await rejection(stat(stale))) as NodeJS.ErrnoException).code, 'ENOENT');
    assert.ok((await stat(live)).isFile(), 'a fresh one (its writer may be running) is kept');
  },
);

tokens('reads a tokens file, skipping comments and blank lines', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, `# service accounts\n\n  alpha  \n${HASH}\n   # indented comment\nbeta\n`);
  const source = await resolveTokens({ tokens: [], tokensFile: file, dataDir: dir });
  assert.equal(grants(source, ['alpha', HASHED, 'beta', '# service accounts']), {
    alpha: EVERY,
    [HASHED]: EVERY,
    beta: EVERY,
    '# service accounts': null,
  });
  assert.equal(source.file, { path: file, variable: 'REPORTS_TOKENS_FILE', generated: false });
});

tokens('reads named tokens with their scopes beside unnamed ones', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(
    file,
    `reader read reader-token-0123456789abcdef\nwriter\twrite  writer-token-0123456789abcdef\nadmin-token-0123456789abcdef\nbilling.v2 write,read ${HASH}\n`,
  );
  const source = await resolveTokens({ tokens: [], tokensFile: file, dataDir: dir });
  assert.equal(
    grants(source, [
      'reader-token-0123456789abcdef',
      'writer-token-0123456789abcdef',
      'admin-token-0123456789abcdef',
      HASHED,
    ]),
    {
      'reader-token-0123456789abcdef': { name: 'reader', scopes: ['read'] },
      'writer-token-0123456789abcdef': { name: 'writer', scopes: ['write'] },
      'admin-token-0123456789abcdef': EVERY,
      [HASHED]: { name: 'billing.v2', scopes: ['read', 'write'] },
    },
  );
});

tokens('joins the environment tokens and the file tokens', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, 'from-file\n');
  assert.equal(
    grants(await resolveTokens({ tokens: ['from-env'], tokensFile: file, dataDir: dir }), ['from-env', 'from-file']),
    { 'from-env': EVERY, 'from-file': EVERY },
  );
});

tokens(
  'refuses a token configured twice, in the environment and the file, naming both places and never the token',
  async ({ dir }) => {
    const file = join(dir, 'tokens.txt');
    await writeFile(file, `# ops\nops write ${HASH}\n`);
    const error = await rejection(
      resolveTokens({ tokens: ['first-token-0123456789abc', HASHED], tokensFile: file, dataDir: dir }),
    );
    assert.instance(error, ConfigError);
    assert.is(
      (error as ConfigError).message,
      `REPORTS_TOKENS_FILE: ${file} line 2: the same token as REPORTS_TOKENS entry 2; each token may be configured once`,
    );
    assert.not.match((error as Error).message, HASHED);
  },
);

tokens('refuses a token given twice in REPORTS_TOKENS', async ({ dir }) => {
  const error = await rejection(
    resolveTokens({ tokens: ['same-token-0123456789abc', 'same-token-0123456789abc'], dataDir: dir }),
  );
  assert.is(
    (error as ConfigError).message,
    'REPORTS_TOKENS: REPORTS_TOKENS entry 2: the same token as REPORTS_TOKENS entry 1; each token may be configured once',
  );
});

tokens(
  'rejects a tokens file with a bad sha256 entry, naming REPORTS_TOKENS_FILE, the file and the line',
  async ({ dir }) => {
    const file = join(dir, 'tokens.txt');
    await writeFile(file, 'good\nsha256:1234\n');
    const error = await rejection(resolveTokens({ tokens: [], tokensFile: file, dataDir: dir }));
    assert.instance(error, ConfigError);
    assert.is((error as ConfigError).variable, 'REPORTS_TOKENS_FILE');
    assert.match((error as ConfigError).message, `${file} line 2: `);
  },
);

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
  const token = source.generated?.token ?? '';
  assert.ok(token.length >= 32);
  assert.equal(grants(source, [token]), { [token]: EVERY });
  assert.equal(
    source.file,
    { path, variable: 'REPORTS_TOKENS', generated: true },
    'the generated file is the one a reload reads',
  );
  assert.is((await readFile(path, 'utf8')).trim(), source.generated?.token);
  assert.is((await stat(path)).mode & 0o777, 0o600);
});

tokens('reads the same token on the second start and generates nothing', async ({ dir }) => {
  const first = await resolveTokens({ tokens: [], dataDir: dir });
  const second = await resolveTokens({ tokens: [], dataDir: dir });
  const token = first.generated?.token ?? '';
  assert.is(second.generated, undefined);
  assert.equal(grants(second, [token]), { [token]: EVERY });
});

tokens(
  'reads named lines added to the generated token file, the generated token keeping every scope',
  async ({ dir }) => {
    const first = await resolveTokens({ tokens: [], dataDir: dir });
    const token = first.generated?.token ?? '';
    await writeFile(join(dir, 'token'), `${token}\nreader read reader-token-0123456789abcdef\n`, { flag: 'w' });
    const second = await resolveTokens({ tokens: [], dataDir: dir });
    assert.equal(grants(second, [token, 'reader-token-0123456789abcdef']), {
      [token]: EVERY,
      'reader-token-0123456789abcdef': { name: 'reader', scopes: ['read'] },
    });
  },
);

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

tokens(
  'warns about each token shorter than 22 characters, naming its variable and place, never the token',
  async ({ dir }) => {
    const file = join(dir, 'tokens.txt');
    await writeFile(file, `# tokens\nx\n${'f'.repeat(22)}\n`, { mode: 0o600 });
    const { logger, lines, text } = memoryLogger();
    await resolveTokens(
      { tokens: ['a'.repeat(21), 'b'.repeat(22), `sha256:${'0'.repeat(64)}`], tokensFile: file, dataDir: dir },
      { logger },
    );
    const warnings = lines().filter((line) => line['level'] === 40);
    assert.equal(
      warnings.map((line) => [line['variable'], line['where'], line['characters']]),
      [
        ['REPORTS_TOKENS', 'REPORTS_TOKENS entry 1', 21],
        ['REPORTS_TOKENS_FILE', `${file} line 2`, 1],
      ],
    );
    assert.not.match(text(), 'a'.repeat(21));
  },
);

tokens('does not warn about a generated token', async ({ dir }) => {
  const { logger, lines } = memoryLogger();
  await resolveTokens({ tokens: [], dataDir: dir }, { logger });
  assert.equal(lines(), []);
});

const reload = suite<{ dir: string }>('reloadTokens');
reload.before.each(async (context) => {
  context.dir = await tempDir('reports-tokens-');
});
reload.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

reload('reads the file again, with the environment tokens as parsed at start', async ({ dir }) => {
  const file = join(dir, 'tokens.txt');
  await writeFile(file, 'reader read reader-token-0123456789abcdef\n');
  const config = { tokens: ['env-token-0123456789abcdef'], tokensFile: file, dataDir: dir };
  await writeFile(file, 'writer write writer-token-0123456789abcdef\n');
  const { set } = await reloadTokens(config, tokensFileOf(config) as NonNullable<ReturnType<typeof tokensFileOf>>);
  assert.equal(
    grants({ set }, ['env-token-0123456789abcdef', 'reader-token-0123456789abcdef', 'writer-token-0123456789abcdef']),
    {
      'env-token-0123456789abcdef': EVERY,
      'reader-token-0123456789abcdef': null,
      'writer-token-0123456789abcdef': { name: 'writer', scopes: ['write'] },
    },
  );
});

reload('never creates the generated token file: one deleted since the start is an error', async ({ dir }) => {
  const config = { tokens: [], dataDir: dir };
  const error = await rejection(
    reloadTokens(config, tokensFileOf(config) as NonNullable<ReturnType<typeof tokensFileOf>>),
  );
  assert.instance(error, ConfigError);
  assert.match((error as Error).message, 'cannot read');
  assert.is(((await rejection(stat(join(dir, 'token')))) as NodeJS.ErrnoException).code, 'ENOENT');
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
reload.run();
notice.run();
