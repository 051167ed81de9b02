import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../src/config.js';
import { parseTokenLines } from '../../src/tokens/token-lines.js';

const origin = { path: '/etc/reports/tokens', variable: 'REPORTS_TOKENS_FILE' };
const SECRET = 'Zq8v-secret-token-0123456789';

function refusal(text: string): string {
  try {
    parseTokenLines(text, origin);
  } catch (error) {
    assert.instance(error, ConfigError);
    assert.is((error as ConfigError).variable, 'REPORTS_TOKENS_FILE');
    return (error as ConfigError).message;
  }
  assert.unreachable(`accepted: ${text}`);
  throw new Error('unreachable');
}

const lines = suite('parseTokenLines');

lines('reads a token alone as unnamed with every scope, and `name scopes token` as named', () => {
  const parsed = parseTokenLines(
    `# comment\n\n${SECRET}\n  reader   read   sha256:${'ab'.repeat(32)}  \nops\twrite,read\tops-token-0123456789abcdef\r\n`,
    origin,
  );
  assert.equal(
    parsed.map(({ line, token, name, scopes }) => ({ line, token, name, scopes: [...scopes].sort() })),
    [
      { line: 3, token: SECRET, name: undefined, scopes: ['read', 'write'] },
      { line: 4, token: `sha256:${'ab'.repeat(32)}`, name: 'reader', scopes: ['read'] },
      { line: 5, token: 'ops-token-0123456789abcdef', name: 'ops', scopes: ['read', 'write'] },
    ],
  );
});

lines('takes names of letters, digits, dots, underscores and hyphens, up to 64 characters', () => {
  const name = `A.b_c-9${'x'.repeat(57)}`;
  assert.is(parseTokenLines(`${name} read ${SECRET}`, origin)[0]?.name, name);
  assert.match(
    refusal(`${name}x read ${SECRET}`),
    '/etc/reports/tokens line 1: the name (first field) must be 1 to 64 letters',
  );
  assert.match(refusal(`na/me read ${SECRET}`), 'line 1: the name (first field)');
  assert.match(refusal(`"quoted" read ${SECRET}`), 'line 1: the name (first field)');
});

lines('refuses an unknown scope, naming the file and line and never the field', () => {
  assert.is(
    refusal(`# x\nreader read,admin ${SECRET}`),
    'REPORTS_TOKENS_FILE: /etc/reports/tokens line 2: unknown scope in the second field; the scopes are read and write, separated by commas',
  );
  assert.match(refusal(`reader read, ${SECRET}`), 'unknown scope');
  assert.match(refusal(`reader READ ${SECRET}`), 'unknown scope');
  // Fields written in another order: the token in the scopes' place is not echoed.
  assert.not.match(refusal(`reader ${SECRET} read`), SECRET);
});

lines('refuses a name used twice, naming both lines', () => {
  assert.is(
    refusal(`ops read ${SECRET}\nops write other-token-0123456789abc`),
    'REPORTS_TOKENS_FILE: /etc/reports/tokens line 2: the name (first field) is the name of line 1 too; names are unique',
  );
});

lines('refuses a line of two or four fields, never echoing them', () => {
  assert.is(
    refusal(`reader ${SECRET}`),
    'REPORTS_TOKENS_FILE: /etc/reports/tokens line 1: expected "name scope[,scope] token" or a token alone, got 2 fields',
  );
  assert.match(refusal(`reader read ${SECRET} extra`), 'got 4 fields');
  assert.not.match(refusal(`${SECRET} read`), SECRET);
});

lines('refuses a token that could not be sent in a header, and a bad sha256 entry, naming the line', () => {
  assert.match(refusal('ok-token-0123456789abcdef\nbad"token'), 'line 2: the token: a token may hold only');
  assert.match(
    refusal('reader read sha256:12'),
    'line 1: the token (third field): a sha256: entry must be followed by 64 hex digits',
  );
});

lines('reads nothing from a file of comments and blank lines', () => {
  assert.equal(parseTokenLines('# nobody yet\n\n   \n', origin), []);
});

lines.run();
