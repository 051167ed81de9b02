import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../src/config.js';
import { ALL_SCOPES, type Scope } from '../../src/tokens/scopes.js';
import { hasChanged, tokenChange } from '../../src/tokens/token-change.js';
import { createTokenSet, tokenDigest, type TokenSpec } from '../../src/tokens/token-set.js';

function spec(token: string, name?: string, scopes: readonly Scope[] = ['read', 'write'], origin = 'here'): TokenSpec {
  return {
    token,
    scopes: name === undefined ? ALL_SCOPES : new Set(scopes),
    origin,
    variable: 'REPORTS_TOKENS_FILE',
    ...(name === undefined ? {} : { name }),
  };
}

function countingDigest() {
  const hashed: string[] = [];
  return { hashed, digest: (token: string) => (hashed.push(token), tokenDigest(token)) };
}

const set = suite('TokenSet');

set('grants configured tokens, plain or as sha256: entries, and nothing to others', () => {
  const tokens = createTokenSet([
    spec('plain-token'),
    spec(`sha256:${tokenDigest('hashed-token').toString('hex')}`, 'hashed', ['read']),
  ]);
  assert.equal(tokens.grantFor('plain-token')?.authContext, { authtype: 'api_key' });
  assert.equal([...(tokens.grantFor('plain-token')?.scopes ?? [])], ['read', 'write']);
  assert.is(tokens.grantFor('hashed-token')?.name, 'hashed');
  assert.equal(tokens.grantFor('hashed-token')?.authContext, { authtype: 'api_key', authid: 'hashed' });
  assert.equal([...(tokens.grantFor('hashed-token')?.scopes ?? [])], ['read']);
  assert.is(tokens.grantFor('other-token'), undefined);
  assert.is(tokens.grantFor('plain-token '), undefined);
  assert.is(tokens.grantFor(''), undefined);
});

set('hashes a valid token once, however often it is presented', () => {
  const { hashed, digest } = countingDigest();
  const tokens = createTokenSet([spec('one', 'one'), spec('two')], { digest });
  for (let i = 0; i < 100; i++) {
    assert.is(tokens.grantFor('one')?.name, 'one');
    assert.ok(tokens.grantFor('two'));
  }
  assert.equal(hashed, ['one', 'two']);
});

set('never remembers an unknown token: it is hashed and refused every time', () => {
  const { hashed, digest } = countingDigest();
  const tokens = createTokenSet([spec('one')], { digest });
  for (let i = 0; i < 50; i++) assert.is(tokens.grantFor(`guess-${i % 5}`), undefined);
  assert.is(hashed.length, 50);
  assert.ok(tokens.grantFor('one'));
  assert.is(tokens.grantFor('guess-0'), undefined);
  assert.is(hashed.length, 52);
});

set('refuses a token configured twice, also once plain and once as its digest, naming both places', () => {
  const twice = () =>
    createTokenSet([
      spec('same-token', undefined, undefined, 'line 1'),
      spec(`sha256:${tokenDigest('same-token').toString('hex').toUpperCase()}`, 'again', ['read'], 'line 3'),
    ]);
  assert.throws(
    twice,
    (error: unknown) =>
      error instanceof ConfigError &&
      error.message === 'REPORTS_TOKENS_FILE: line 3: the same token as line 1; each token may be configured once',
  );
});

set.run();

const change = suite('tokenChange');

change('tells names added, removed, rotated and rescoped, and unnamed tokens counted, never a token', () => {
  const before = createTokenSet([
    spec('a-token', 'alpha'),
    spec('b-token', 'beta'),
    spec('c-token', 'gamma', ['read']),
    spec('u1'),
    spec('u2'),
  ]);
  const after = createTokenSet([
    spec('a-token', 'alpha'),
    spec('c-token', 'gamma', ['read', 'write']),
    spec('new-b-token', 'delta'),
    spec('u2'),
    spec('u3'),
    spec('u4'),
    spec('rotated-a', 'epsilon'),
  ]);
  const again = createTokenSet([
    spec('a-token', 'alpha'),
    spec('c-token', 'gamma', ['read', 'write']),
    spec('new-b-token', 'delta'),
    spec('u2'),
    spec('u3'),
    spec('u4'),
    spec('other', 'epsilon'),
  ]);
  const changed = tokenChange(before, after);
  assert.equal(changed, {
    tokens: 7,
    added: ['delta', 'epsilon'],
    removed: ['beta'],
    rotated: [],
    rescoped: ['gamma'],
    unnamedAdded: 2,
    unnamedRemoved: 1,
  });
  assert.ok(hasChanged(changed));
  assert.equal(tokenChange(after, again).rotated, ['epsilon']);
  assert.not.match(JSON.stringify(changed), /-token|"u\d|rotated-a/);
});

change('finds nothing changed between two sets of the same tokens, names and scopes', () => {
  const specs = [spec('a-token', 'alpha', ['read']), spec('u1')];
  assert.not.ok(hasChanged(tokenChange(createTokenSet(specs), createTokenSet([...specs].reverse()))));
});

change.run();
