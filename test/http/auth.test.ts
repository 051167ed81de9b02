import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AppError, ForbiddenError, UnauthorizedError } from '../../src/errors.js';
import { bearerAuth, type AuthorizedContext } from '../../src/http/auth.js';
import { ALL_SCOPES } from '../../src/tokens/scopes.js';
import { createTokenSet, type CurrentTokens } from '../../src/tokens/token-set.js';

function request(
  authorization: string,
  rawHeaders?: readonly string[],
): AuthorizedContext & { state: { tokenName?: string } } {
  const state: { tokenName?: string } = {};
  const get = (name: string) => (name.toLowerCase() === 'authorization' ? authorization : '');
  return rawHeaders === undefined ? { get, state } : { get, state, req: { rawHeaders } };
}

function thrown(work: () => unknown): AppError {
  try {
    work();
  } catch (error) {
    assert.instance(error, AppError);
    return error as AppError;
  }
  assert.unreachable('nothing was thrown');
  throw new Error('unreachable');
}

const tokens = (): CurrentTokens => ({
  current: createTokenSet([
    { token: 'admin-token', scopes: ALL_SCOPES, origin: 'line 1', variable: 'REPORTS_TOKENS_FILE' },
    {
      token: 'reader-token',
      name: 'reader',
      scopes: new Set(['read'] as const),
      origin: 'line 2',
      variable: 'REPORTS_TOKENS_FILE',
    },
  ]),
});

const auth = suite('bearerAuth');

auth('returns the grant of a token with the scope, and names a named token for the access log', () => {
  const check = bearerAuth(tokens());
  const admin = request('Bearer admin-token');
  assert.equal(check(admin, 'write').authContext, { authtype: 'api_key' });
  assert.is(admin.state.tokenName, undefined);
  const reader = request('bearer  reader-token ');
  assert.equal(check(reader, 'read').authContext, { authtype: 'api_key', authid: 'reader' });
  assert.is(reader.state.tokenName, 'reader');
});

auth('answers 401 without a valid token, before any scope is looked at', () => {
  const check = bearerAuth(tokens());
  for (const header of ['', 'Basic abc', 'Bearer ', 'Bearer unknown-token']) {
    const error = thrown(() => check(request(header), 'read'));
    assert.instance(error, UnauthorizedError);
    assert.is(error.status, 401);
  }
});

auth('answers 401 to an Authorization header sent twice, even when the first holds a valid token', () => {
  const check = bearerAuth(tokens());
  const twice = ['Host', 'x', 'Authorization', 'Bearer admin-token', 'authorization', 'Bearer other'];
  const error = thrown(() => check(request('Bearer admin-token', twice), 'read'));
  assert.instance(error, UnauthorizedError);
  assert.is(error.status, 401);
  assert.is(error.message, 'the Authorization header must be sent once; this request sends it more than once');
  assert.equal(error.headers, { 'WWW-Authenticate': 'Bearer realm="reports"' });
  // Once is fine, whatever else the request carries.
  const once = ['Host', 'x', 'AUTHORIZATION', 'Bearer admin-token', 'Accept', '*/*'];
  assert.ok(check(request('Bearer admin-token', once), 'read'));
});

auth(
  'answers 403 with an insufficient_scope challenge to a token outside its scopes, naming it and never the token',
  () => {
    const reader = request('Bearer reader-token');
    const error = thrown(() => bearerAuth(tokens())(reader, 'write'));
    assert.instance(error, ForbiddenError);
    assert.is(error.status, 403);
    assert.is(
      error.message,
      'the token "reader" does not have the scope write, which this request needs (it has read)',
    );
    assert.equal(error.headers, {
      'WWW-Authenticate': 'Bearer realm="reports", error="insufficient_scope", scope="write"',
    });
    assert.is(reader.state.tokenName, 'reader', 'the access log line of a 403 says whose token it was');
  },
);

auth('reads the set in use on every request, so a swapped set applies from the next one', () => {
  const current = tokens();
  const check = bearerAuth(current);
  assert.ok(check(request('Bearer reader-token'), 'read'));
  current.current = createTokenSet([
    { token: 'admin-token', scopes: ALL_SCOPES, origin: 'line 1', variable: 'REPORTS_TOKENS_FILE' },
  ]);
  assert.is(thrown(() => check(request('Bearer reader-token'), 'read')).status, 401);
  assert.ok(check(request('Bearer admin-token'), 'write'));
});

auth.run();
