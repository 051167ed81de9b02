// ETags and the conditional request headers (RFC 9110 8.8.3, 13.1.1, 13.1.2). A report's ETag is
// its version, strong, as a quoted decimal: `"3"`. The version counts the events that took effect on
// the report id (odd while live), so it changes with every write, never comes back after a delete
// and a create again, and is the same on every instance (each folds the same partition order). The
// conditions are parsed here into the versions they name; src/reports/decide.ts decides with them.
import { BadRequestError } from '../errors.js';
import type { Preconditions, VersionCondition } from '../reports/decide.js';

/**
 * A report read may be kept by the client's own cache but never by a shared one, and is checked
 * with the server (If-None-Match) before each use: a deleted report's content must not outlive its
 * erasure in a proxy, and a cached copy is never served after the report changed.
 */
export const REPORT_CACHE_CONTROL = 'private, no-cache';

/** The ETag of a report at `version`. */
export function reportEtag(version: number): string {
  return `"${version}"`;
}

// An entity-tag (RFC 9110 8.8.3): optionally `W/`, then any visible ASCII but `"` between quotes
// (the RFC's obs-text, bytes 0x80-0xFF, is not admitted: no ETag of this service holds such bytes).
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7e]*"';
const OWS = '[ \\t]*';

/**
 * `*`, or a comma-separated list of entity-tags (RFC 9110 5.6.1: empty elements are allowed and
 * ignored), with at least one tag. The OpenAPI document gives the same pattern.
 */
export const ENTITY_TAGS_PATTERN = `^${OWS}(?:\\*|(?:,${OWS})*${ENTITY_TAG}(?:${OWS},(?:${OWS}${ENTITY_TAG})?)*)${OWS}$`;

const entityTags = new RegExp(ENTITY_TAGS_PATTERN);
const eachTag = /(W\/)?"([\x21\x23-\x7e]*)"/g;
/** The opaque-tag of a version as reportEtag writes it; `"03"` or `"+3"` are other tags, which no report has. */
const versionTag = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * The versions a header names. If-Match compares strongly (13.1.1: a weak tag never matches),
 * If-None-Match weakly (13.1.2: `W/"3"` matches `"3"`). Tags that are no report's ETag are kept
 * out: they match nothing, and a list of them only makes the condition false.
 */
function parseCondition(name: 'If-Match' | 'If-None-Match', value: string | undefined): VersionCondition | undefined {
  if (value === undefined) return undefined;
  if (!entityTags.test(value))
    throw new BadRequestError(
      `the ${name} header must be "*" or a comma-separated list of entity tags such as "3" (the ETag of a report)`,
    );
  if (value.trim() === '*') return { kind: 'any' };
  const versions: number[] = [];
  for (const [, weak, opaque = ''] of value.matchAll(eachTag)) {
    if (weak !== undefined && name === 'If-Match') continue;
    if (versionTag.test(opaque)) versions.push(Number(opaque));
  }
  return { kind: 'versions', versions };
}

/** The preconditions of a request from its If-Match and If-None-Match headers (a malformed one is 400). */
export function parsePreconditions(ifMatch: string | undefined, ifNoneMatch: string | undefined): Preconditions {
  const match = parseCondition('If-Match', ifMatch);
  const noneMatch = parseCondition('If-None-Match', ifNoneMatch);
  if (match === undefined) return noneMatch === undefined ? {} : { ifNoneMatch: noneMatch };
  return noneMatch === undefined ? { ifMatch: match } : { ifMatch: match, ifNoneMatch: noneMatch };
}
