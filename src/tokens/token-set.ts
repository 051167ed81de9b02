// The tokens a server accepts, each with what it may do and who it is. One set is in use at a time
// (CurrentTokens); a reload builds a new one from the configuration and swaps it in whole, so a
// request sees either the old set or the new one, never a mix. Tokens are held as SHA-256 digests
// and compared in constant time, so neither the configured secrets nor their timing leak.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthContext } from '../../projections/events.js';
import { ConfigError } from '../config.js';
import { ALL_SCOPES, type Scope } from './scopes.js';

/** What a request with a token may do, and who wrote what it writes. */
export interface TokenGrant {
  /** The name of the tokens file's line; undefined for an unnamed token. */
  readonly name?: string;
  readonly scopes: ReadonlySet<Scope>;
  /** The CloudEvents authcontext of the events it writes: `api_key`, the name as `authid`. */
  readonly authContext: AuthContext;
}

/** One configured token, before it is digested. */
export interface TokenSpec {
  /** A plain token or a `sha256:<hex>` entry. */
  readonly token: string;
  readonly name?: string;
  readonly scopes: ReadonlySet<Scope>;
  /** Where it was configured, for errors: "REPORTS_TOKENS entry 2", "/etc/reports/tokens line 4". */
  readonly origin: string;
  readonly variable: string;
}

interface TokenEntry {
  readonly digest: Buffer;
  readonly grant: TokenGrant;
}

/** The bearer token's kind in the CloudEvents authcontext extension: "a non-user API key". */
const AUTH_TYPE = 'api_key';
/** Every unnamed token shares its grant: every scope, and no authid (an unnamed token has no label that is not a secret). */
const UNNAMED: TokenGrant = Object.freeze({ scopes: ALL_SCOPES, authContext: Object.freeze({ authtype: AUTH_TYPE }) });

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function digestOf(entry: string): Buffer {
  return entry.startsWith('sha256:') ? Buffer.from(entry.slice(7), 'hex') : tokenDigest(entry);
}

export interface TokenSetOptions {
  /** How a presented token is hashed (tests count the calls). */
  readonly digest?: (token: string) => Buffer;
}

export class TokenSet {
  /**
   * Presented tokens that matched, with their grant, so a client's token is hashed once rather than
   * on every request. Only matching tokens are kept, and a token is the only string with its digest,
   * so it never holds more entries than there are configured tokens, whatever clients send.
   */
  private readonly verified = new Map<string, TokenGrant>();
  private readonly digest: (token: string) => Buffer;

  constructor(
    private readonly entries: readonly TokenEntry[],
    { digest = tokenDigest }: TokenSetOptions = {},
  ) {
    this.digest = digest;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The grant of a presented token, or undefined when it is none of the set's. */
  grantFor(token: string): TokenGrant | undefined {
    const known = this.verified.get(token);
    if (known !== undefined) return known;
    const presented = this.digest(token);
    let found: TokenGrant | undefined;
    // No early exit: every digest is compared whatever the result. An unknown token is hashed and
    // compared each time; looking it up first compares it only with tokens of the same string hash.
    for (const entry of this.entries)
      if (timingSafeEqual(presented, entry.digest) && found === undefined) found = entry.grant;
    if (found !== undefined && this.verified.size < this.entries.length) this.verified.set(token, found);
    return found;
  }

  /** Names, digests (hex) and scopes, for telling what a reload changed; never the tokens. */
  describe(): readonly { readonly name?: string; readonly digest: string; readonly scopes: ReadonlySet<Scope> }[] {
    return this.entries.map(({ digest, grant }) => ({
      digest: digest.toString('hex'),
      scopes: grant.scopes,
      ...(grant.name === undefined ? {} : { name: grant.name }),
    }));
  }
}

/** Builds a set, refusing a token configured twice (also once plain and once as its digest): its scopes and name would be ambiguous. */
export function createTokenSet(specs: readonly TokenSpec[], options: TokenSetOptions = {}): TokenSet {
  const seen = new Map<string, string>();
  const entries = specs.map(({ token, name, scopes, origin, variable }) => {
    const digest = digestOf(token);
    const key = digest.toString('hex');
    const earlier = seen.get(key);
    if (earlier !== undefined)
      throw new ConfigError(variable, `${origin}: the same token as ${earlier}; each token may be configured once`);
    seen.set(key, origin);
    const grant: TokenGrant =
      name === undefined
        ? UNNAMED
        : Object.freeze({ name, scopes, authContext: Object.freeze({ authtype: AUTH_TYPE, authid: name }) });
    return { digest, grant };
  });
  return new TokenSet(entries, options);
}

/** The set in use: the auth check reads `current` on every request, a reload assigns it. */
export interface CurrentTokens {
  current: TokenSet;
}
