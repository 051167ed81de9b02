// Reads a JSON request body: content type (415), size (413), then JSON syntax (400), in that order.
import bodyParser from 'koa-bodyparser';
import type Koa from 'koa';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { InvalidJsonError, parseJsonBody } from './json-body.js';

/** Reads and parses the body of a request, or throws the AppError that answers it. */
export type ReadJson = (ctx: Koa.Context) => Promise<unknown>;

/** The Content-Type values nearly every client sends, accepted without parsing the header. */
const PLAIN_JSON_TYPES: ReadonlySet<string | undefined> = new Set(['application/json', 'application/json; charset=utf-8']);

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
    throw new UnsupportedMediaTypeError(given === '' ? 'the Content-Type header is missing; send application/json' : `Content-Type must be application/json, got "${given.slice(0, 100)}"`);
  }
  const charset = ctx.request.charset;
  if (charset !== '' && charset.toLowerCase() !== 'utf-8') throw new UnsupportedMediaTypeError(`charset must be utf-8, got "${charset.slice(0, 40)}"`);
}

/** A reader rather than a middleware: the route awaits it in its own step. */
export function jsonReader(bodyLimitBytes: number): ReadJson {
  // The raw text is taken from koa-bodyparser and parsed here, because its JSON.parse loses int64 precision.
  const readText = bodyParser({ enableTypes: ['text'], extendTypes: { text: ['application/json'] }, textLimit: String(bodyLimitBytes) });
  return async (ctx) => {
    checkContentType(ctx);
    try {
      await readText(ctx, noNext);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (status === 413) throw new PayloadTooLargeError(bodyLimitBytes);
      if (status === 415) throw new UnsupportedMediaTypeError('the request body encoding is not supported');
      throw new BadRequestError('the request body could not be read');
    }
    const text = ctx.request.rawBody;
    try {
      return parseJsonBody(typeof text === 'string' ? text : '');
    } catch (error) {
      if (error instanceof InvalidJsonError) throw new BadRequestError(`request body is not valid JSON: ${error.message}`);
      throw error;
    }
  };
}
