import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTokenCheck, digestsOf, tokenDigest } from '../../src/http/auth.js';

const check = suite('createTokenCheck');

function countingDigest() {
  const hashed: string[] = [];
  return { hashed, digest: (token: string) => (hashed.push(token), tokenDigest(token)) };
}

check('accepts configured tokens, plain or as sha256: entries, and refuses others', () => {
  const isValid = createTokenCheck(digestsOf(['plain-token', `sha256:${tokenDigest('hashed-token').toString('hex')}`]));
  assert.ok(isValid('plain-token'));
  assert.ok(isValid('hashed-token'));
  assert.not.ok(isValid('other-token'));
  assert.not.ok(isValid('plain-token '));
  assert.not.ok(isValid(''));
});

check('hashes a valid token once, however often it is presented', () => {
  const { hashed, digest } = countingDigest();
  const isValid = createTokenCheck(digestsOf(['one', 'two']), { digest });
  for (let i = 0; i < 100; i++) {
    assert.ok(isValid('one'));
    assert.ok(isValid('two'));
  }
  assert.equal(hashed, ['one', 'two']);
});

check('never remembers an unknown token: it is hashed and refused every time', () => {
  const { hashed, digest } = countingDigest();
  const isValid = createTokenCheck(digestsOf(['one']), { digest });
  for (let i = 0; i < 50; i++) assert.not.ok(isValid(`guess-${i % 5}`));
  assert.is(hashed.length, 50);
  assert.ok(isValid('one'));
  assert.not.ok(isValid('guess-0'));
  assert.is(hashed.length, 52);
});

check.run();
