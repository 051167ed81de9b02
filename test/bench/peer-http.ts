// The HTTP edge the database peers of `make bench` share (Koa + PostgreSQL, Emmett), so both answer
// as the service does for the same reasons: the same bearer check (SHA-256 digests compared in
// constant time), the same body validation a user would write on JSON.parse (an integer id, a
// non-empty name, an optional tag, both at most 4096 characters; 400 otherwise, 415 for another
// Content-Type, 64 KiB bodies) and the same answers ({name, tag?}; {error, message} on failure).
import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import type { Context, Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';

const MAX_CHARS = 4096;

export interface NewReport {
  /** The decimal form of the id (the driver sends it as a bigint parameter). */
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
}

function validText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_CHARS;
}

/** The report of a request body, or the message of its 400. */
export function parseReport(body: unknown): NewReport | string {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object';
  const { id, name, tag } = body as Record<string, unknown>;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return 'id must be an integer';
  if (!validText(name)) return 'name must be a non-empty string';
  if (tag !== undefined && !validText(tag)) return 'tag must be a non-empty string';
  return { id: String(id), name, tag: tag ?? null };
}

export function sendError(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { error: status, message };
}

/** The service's answer to a create: the name, and the tag when there is one. */
export function reportBody({ name, tag }: { readonly name: string; readonly tag: string | null }): {
  name: string;
  tag?: string;
} {
  return tag === null ? { name } : { name, tag };
}

/** 401 unless the request carries the token: first, so an unknown caller's body is never read. */
export function bearerAuth(token: string): Middleware {
  const tokenDigest = createHash('sha256').update(token).digest();
  const authorized = (ctx: Context): boolean => {
    const header = ctx.get('Authorization');
    if (!header.startsWith('Bearer ')) return false;
    return timingSafeEqual(createHash('sha256').update(header.slice(7)).digest(), tokenDigest);
  };
  return async (ctx, next) => {
    if (!authorized(ctx)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="reports"');
      return sendError(ctx, 401, 'missing or unknown bearer token');
    }
    await next();
  };
}

/** 415 for another Content-Type, then the JSON body parsed (64 KiB at most). */
export function jsonBody(): Middleware[] {
  const jsonOnly: Middleware = async (ctx, next) => {
    if (!ctx.is('application/json')) return sendError(ctx, 415, 'Content-Type must be application/json');
    await next();
  };
  return [jsonOnly, bodyParser({ enableTypes: ['json'], jsonLimit: '64kb' })];
}

/** Listens on PORT and HOST; on SIGTERM or SIGINT stops taking connections, then runs `close` and exits. */
export function servePeer(app: Koa, close: () => Promise<void>): void {
  const port = Number(process.env['PORT'] ?? '0');
  const host = process.env['HOST'] ?? '127.0.0.1';
  const server = app.listen(port, host);
  const stop = () => server.close(() => void close().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
