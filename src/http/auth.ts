// Bearer token check (RFC 6750) with scopes: `auth(ctx, 'read')` / `auth(ctx, 'write')` is the
// first thing a route does, so a request without a valid token (401) or outside its token's scopes
// (403) learns nothing about its body or the store, and no body is read for it.
import type { Context } from 'koa';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import type { Scope } from '../tokens/scopes.js';
import type { CurrentTokens, TokenGrant } from '../tokens/token-set.js';

export { READ, SCOPES, WRITE, type Scope } from '../tokens/scopes.js';

declare module 'koa' {
  interface DefaultState {
    /** The name of the request's token (the access log line says who), once it is authorised. */
    tokenName?: string;
  }
}

/** What `auth` reads and writes of a request (`req.rawHeaders`: whether the header came more than once). */
export type AuthorizedContext = Pick<Context, 'get' | 'state'> & {
  readonly req?: { readonly rawHeaders: readonly string[] };
};

/**
 * Throws UnauthorizedError (401) unless the request carries a valid bearer token, then
 * ForbiddenError (403) unless the token has `scope`; returns the token's grant (its authcontext
 * goes into the event the request writes). Sets `ctx.state.tokenName` for the access log.
 */
export type Authorize = (ctx: AuthorizedContext, scope: Scope) => TokenGrant;

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Whether the request carries Authorization more than once. Node keeps the first and drops the
 * rest, and a proxy in front may check the last: two parties would authorise different tokens.
 */
function repeated(rawHeaders: readonly string[] | undefined): boolean {
  if (rawHeaders === undefined) return false;
  let seen = 0;
  for (let index = 0; index < rawHeaders.length; index += 2)
    if ((rawHeaders[index] as string).length === 13 && (rawHeaders[index] as string).toLowerCase() === 'authorization')
      seen += 1;
  return seen > 1;
}

/**
 * A plain check rather than a middleware: the routes call it first, so it costs no step of its own.
 * It reads `tokens.current` on every request, so a reload's new set applies from the next one.
 * `realm` tells the two sets of tokens apart in the challenge: `reports` (the API), `metrics`.
 */
export function bearerAuth(tokens: CurrentTokens, realm = 'reports'): Authorize {
  return (ctx, scope) => {
    const header = ctx.get('Authorization');
    if (header === '')
      throw new UnauthorizedError(
        'the Authorization header is missing; send "Authorization: Bearer <token>"',
        false,
        realm,
      );
    if (repeated(ctx.req?.rawHeaders))
      throw new UnauthorizedError(
        'the Authorization header must be sent once; this request sends it more than once',
        false,
        realm,
      );
    const match = BEARER.exec(header);
    if (!match) throw new UnauthorizedError('the Authorization header must be "Bearer <token>"', false, realm);
    const grant = tokens.current.grantFor(match[1] as string);
    if (grant === undefined)
      throw new UnauthorizedError('the bearer token in the Authorization header is not valid', true, realm);
    if (grant.name !== undefined) ctx.state.tokenName = grant.name;
    if (!grant.scopes.has(scope))
      throw new ForbiddenError(
        `the token "${grant.name ?? ''}" does not have the scope ${scope}, which this request needs (it has ${[...grant.scopes].join(', ')})`,
        scope,
        realm,
      );
    return grant;
  };
}
