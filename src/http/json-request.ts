// Reads a JSON request body: content type (415), size (413), then JSON syntax (400), in that order.
import bodyParser from 'koa-bodyparser';
import type Koa from 'koa';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { InvalidJsonError, JsonTooDeepError, parseJsonBody } from './json-body.js';

/** Reads and parses the body of a request, or throws the AppError that answers it. */
export type ReadJson = (ctx: Koa.Context) => Promise<unknown>;

/** The Content-Type values nearly every client sends, accepted without parsing the header. */
const PLAIN_JSON_TYPES: ReadonlySet<string | undefined> = new Set([
  'application/json',
  'application/json; charset=utf-8',
]);
/** `charset` values naming UTF-8: the registered name, and the spelling many clients send (`utf8`). */
const UTF8_CHARSETS: ReadonlySet<string> = new Set(['utf-8', 'utf8']);
/** Refuses bytes that are not UTF-8 (the default decoding turns each into U+FFFD, which was then stored). */
const utf8 = new TextDecoder('utf-8', { fatal: true });

const settled = Promise.resolve();
/** koa-bodyparser is used as a function here: it awaits a `next`, and there is none. */
const noNext = () => settled;

/** Whether the request declares a body (as type-is asks before it compares types). */
function declaresBody(headers: Koa.Request['headers']): boolean {
  return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length']));
}

/** 415 unless the body is JSON in UTF-8 (or no charset): the common headers first, then the full media type rules. */
function checkContentType(ctx: Koa.Context): void {
  const { headers } = ctx.request;
  if (PLAIN_JSON_TYPES.has(headers['content-type']) && declaresBody(headers)) return;
  if (!ctx.is('application/json')) {
    const given = ctx.get('Content-Type');
    throw new UnsupportedMediaTypeError(
      given === ''
        ? 'the Content-Type header is missing; send application/json'
        : `Content-Type must be application/json, got "${given.slice(0, 100)}"`,
    );
  }
  const charset = ctx.request.charset;
  if (charset !== '' && !UTF8_CHARSETS.has(charset.toLowerCase()))
    throw new UnsupportedMediaTypeError(`charset must be utf-8, got "${charset.slice(0, 40)}"`);
}

/** A reader rather than a middleware: the route awaits it in its own step. */
export function jsonReader(bodyLimitBytes: number): ReadJson {
  // The raw text is taken from koa-bodyparser and parsed here, because its JSON.parse loses int64 precision.
  // `encoding: null` (passed on to raw-body): the bytes as they came, decoded below, where bytes that are not UTF-8 are refused.
  const options = {
    enableTypes: ['text'],
    extendTypes: { text: ['application/json'] },
    textLimit: String(bodyLimitBytes),
    encoding: null,
  };
  const readText = bodyParser(options);
  return async (ctx) => {
    checkContentType(ctx);
    // Content codings are case-insensitive (RFC 9110 section 8.4.1); the inflating reader knows lower case only.
    const coding = ctx.req.headers['content-encoding'];
    if (coding !== undefined) ctx.req.headers['content-encoding'] = coding.toLowerCase();
    try {
      await readText(ctx, noNext);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (status === 413) throw new PayloadTooLargeError(bodyLimitBytes);
      if (status === 415) throw new UnsupportedMediaTypeError('the request body encoding is not supported');
      throw new BadRequestError('the request body could not be read');
    }
    const text = decodeUtf8(ctx.request.rawBody);
    try {
      return parseJsonBody(text);
    } catch (error) {
      if (error instanceof InvalidJsonError)
        throw new BadRequestError(`request body is not valid JSON: ${error.message}`);
      if (error instanceof JsonTooDeepError) throw new BadRequestError(`request body ${error.message}`);
      throw error;
    }
  };
}

/** The body's bytes as text; a 400 when they are not UTF-8. */
function decodeUtf8(bytes: unknown): string {
  if (!(bytes instanceof Uint8Array)) return '';
  try {
    return utf8.decode(bytes);
  } catch {
    // The decoder's one failure: bytes that are not UTF-8.
    throw new BadRequestError('request body is not valid UTF-8');
  }
}
