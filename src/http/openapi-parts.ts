// The building blocks of the OpenAPI document (openapi.ts): JSON Schema from TypeBox, and the
// responses, headers and parameters that several operations share.
import { IDEMPOTENCY_KEY_MAX_CHARS } from './idempotency-key.js';
import { ENTITY_TAGS_PATTERN, REPORT_CACHE_CONTROL } from './etag.js';
import { ReportIdParam } from './schemas.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** TypeBox -> plain JSON Schema: symbols dropped, the exact-integer `bigint` id shown as int64. */
export function toJsonSchema(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema === 'bigint') return schema.toString();
  if (typeof schema !== 'object' || schema === null) return schema as Json;
  const source = schema as Record<string, unknown>;
  if (source['type'] === 'bigint') {
    return {
      type: 'integer',
      format: 'int64',
      ...(typeof source['description'] === 'string' ? { description: source['description'] } : {}),
    };
  }
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(source)) out[key] = toJsonSchema(value);
  return out;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const jsonContent = (schema: Json) => ({ 'application/json': { schema } });
export const header = (description: string) => ({ description, schema: { type: 'string' } });

export function errorResponse(description: string, headers?: Record<string, Json>): Json {
  return { description, content: jsonContent(ref('Error')), ...(headers ? { headers } : {}) };
}

export const unauthorized = errorResponse('Missing, malformed or unknown bearer token', {
  'WWW-Authenticate': header('Bearer realm="reports", with error="invalid_token" when a token was given (RFC 6750)'),
});
export const forbiddenText = (scope: string) =>
  `The token is valid but does not have the scope ${scope} (a named token of the tokens file limited to other scopes)`;
export const insufficientScope = (scope: string) =>
  header(`Bearer realm="reports", error="insufficient_scope", scope="${scope}" (RFC 6750)`);
/** 403: a valid token without the scope the operation needs (RFC 6750 insufficient_scope). */
export function forbidden(scope: string): Json {
  return errorResponse(forbiddenText(scope), { 'WWW-Authenticate': insufficientScope(scope) });
}
export const unavailable = errorResponse(
  'The event log is unreachable or did not confirm the write in time; a retry of the same request is safe',
  {
    'Retry-After': header('Seconds to wait before retrying'),
  },
);
export const keyReused = errorResponse('The Idempotency-Key was already used for a different request');
export const idempotencyKey: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe to repeat: the same key with the same request gets the first answer again (a retried DELETE gets 204, not 404); ' +
    'the same key with another request gets 422. Keys are recorded in the events, so they survive restarts.',
  schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_CHARS, pattern: '^[\\x21-\\x7e]+$' },
};
export const methodNotAllowed = errorResponse('Known path, wrong method', {
  Allow: header('The methods this path accepts'),
});

export const etagHeader: Json = {
  description:
    'The version of the report, a strong ETag: a quoted decimal ("1" once created; every write to the id counts, so "3" after a delete and a create again)',
  schema: { type: 'string', pattern: '^"[1-9][0-9]*"$' },
};
export const cacheControl: Json = {
  description: 'Kept by the client only, and checked with If-None-Match before each use',
  schema: { type: 'string', const: REPORT_CACHE_CONTROL },
};
// `format` names what the pattern checks, so that tools (the schemathesis run of the tests) can make valid values.
export const conditionSchema: Json = { type: 'string', format: 'entity-tags', pattern: ENTITY_TAGS_PATTERN };
export const ifMatch: Json = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'Carry the request out only if the report is at one of these versions (its ETag; compared strongly), or exists at all (`*`); otherwise 412 and nothing is done. ' +
    'A DELETE of a report that does not exist is 404 whatever it says. A malformed value is 400.',
  schema: conditionSchema,
};
export const ifNoneMatch: Json = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'Carry the request out only if the report is at none of these versions (compared weakly), or does not exist (`*`): otherwise 304 to a GET or HEAD, 412 to a write. ' +
    'A malformed value is 400.',
  schema: conditionSchema,
};
export const preconditionFailed = errorResponse(
  'If-Match names no current version of the report, or If-None-Match names its current one (or is `*` and it exists); nothing was done',
);
export const reportIdParam = (what: string): Json => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The id of the report to ${what}`,
  schema: toJsonSchema(ReportIdParam),
});
export const unopened = errorResponse(
  'The report exists, but its content cannot be opened: its key is missing from the key store (an event of another producer, or a lost key; `reports verify` lists them)',
);
export const notModified: Json = {
  description: "If-None-Match names the current version: the client's copy is current (no body)",
  headers: { ETag: etagHeader, 'Cache-Control': cacheControl },
};
