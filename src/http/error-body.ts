// The one place where errors become responses: every error is rendered as the Error body
// `{error, message}`. Koa's own onerror (text/plain, headers cleared) is never reached.
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';

interface HttpLikeError {
  status?: unknown;
  expose?: unknown;
  message?: unknown;
}

/** Sets the status, headers and Error body that answer `error`. */
export function renderError(ctx: Context, error: unknown, logger: Logger): void {
  if (error instanceof AppError) {
    ctx.status = error.status;
    ctx.set(error.headers);
    ctx.body = { error: error.status, message: error.message };
    return;
  }
  const { status, expose, message } = (error ?? {}) as HttpLikeError;
  if (typeof status === 'number' && status >= 400 && status < 500 && expose === true && typeof message === 'string') {
    ctx.status = status;
    ctx.body = { error: status, message };
    return;
  }
  logger.error({ err: error, method: ctx.method, route: ctx._matchedRoute ?? 'unmatched' }, 'unexpected error');
  ctx.status = 500;
  ctx.body = { error: 500, message: 'internal error; the incident was logged' };
}
