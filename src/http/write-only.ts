// What a token with the scope write and not read is told by a create (docs/operations.md, Tokens).
// A GET answers it 403, so a create must not answer what a GET would: whether a guessed name and
// tag are a live report's (200 to an identical body against 409 to another: the report creator
// never compares them for it), or which version a report is at (a create with If-Match never
// writes, nor does one with If-None-Match naming versions: both only ask, so they need read).
// A create with `If-None-Match: *` (create only if absent) stays a write: that a report exists, a
// create tells any writer anyway.
import { ForbiddenError } from '../errors.js';
import { READ } from '../tokens/scopes.js';

/**
 * Whether a create's If-Match and If-None-Match (raw, as sent) ask about the report's version
 * rather than only guard the write: one sent at all, the other other than `*`. Malformed ones ask
 * too: a write-only token is answered 403 before its conditions are parsed, as before its body.
 */
export function asksVersion(ifMatch: string | undefined, ifNoneMatch: string | undefined): boolean {
  return ifMatch !== undefined || (ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*');
}

/** 403 (scope read) to a write-only token's create whose conditions ask about the version. */
export function versionNeedsRead(tokenName: string | undefined): ForbiddenError {
  return new ForbiddenError(
    `the token "${tokenName ?? ''}" does not have the scope read, which a create with If-Match, or with If-None-Match naming versions, needs: such a condition only asks which version the report is at`,
    READ,
  );
}
