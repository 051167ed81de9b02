// Bearer token check (RFC 6750). Tokens are held as SHA-256 digests and compared in constant time,
// so neither the configured secrets nor their timing leak.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { UnauthorizedError } from '../errors.js';

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Digests of configured entries: plain tokens are hashed, `sha256:<hex>` entries are taken as they are. */
export function digestsOf(entries: readonly string[]): Buffer[] {
  return entries.map((entry) => (entry.startsWith('sha256:') ? Buffer.from(entry.slice(7), 'hex') : tokenDigest(entry)));
}

export interface TokenCheckOptions {
  /** How a presented token is hashed (tests count the calls). */
  readonly digest?: (token: string) => Buffer;
}

/**
 * Checks a presented token against the configured digests. A token that matched is remembered,
 * so a client's token is hashed once rather than on every request. Only matching tokens are kept,
 * and a token is the only string with its digest, so the set never holds more entries than there
 * are configured tokens, whatever clients send. An unknown token is hashed and compared with every
 * digest each time; looking it up first compares it only with tokens of the same string hash.
 */
export function createTokenCheck(digests: readonly Buffer[], { digest: digestOf = tokenDigest }: TokenCheckOptions = {}): (token: string) => boolean {
  const verified = new Set<string>();
  return (token) => {
    if (verified.has(token)) return true;
    const presented = digestOf(token);
    let match = false;
    // No early exit: every digest is compared whatever the result.
    for (const digest of digests) match = timingSafeEqual(presented, digest) || match;
    if (match && verified.size < digests.length) verified.add(token);
    return match;
  };
}

/** Throws UnauthorizedError unless the request carries a valid bearer token. */
export type Authenticate = (ctx: Pick<Context, 'get'>) => void;

/**
 * A plain check rather than a middleware: the routes call it first, so it costs no step of its own.
 * `realm` tells the two sets of tokens apart in the challenge: `reports` (the API), `metrics`.
 */
export function bearerAuth(isValid: (token: string) => boolean, realm = 'reports'): Authenticate {
  return (ctx) => {
    const header = ctx.get('Authorization');
    if (header === '') throw new UnauthorizedError('the Authorization header is missing; send "Authorization: Bearer <token>"', false, realm);
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
    if (!match) throw new UnauthorizedError('the Authorization header must be "Bearer <token>"', false, realm);
    if (!isValid(match[1] as string)) throw new UnauthorizedError('the bearer token in the Authorization header is not valid', true, realm);
  };
}
