// The Koa application and its middleware order: request log and error body -> routes -> 404.
import Koa from 'koa';
import type { Logger } from 'pino';
import { NotFoundError } from '../errors.js';
import { renderError } from './error-body.js';
import type { Metrics } from './metrics.js';
import { createRouter, type RouteDeps } from './routes.js';

export interface AppDeps extends RouteDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
}

export function createApp(deps: AppDeps): Koa {
  const { logger, metrics } = deps;
  const app = new Koa();
  // Every error is rendered by renderError; Koa's default error output must never be reached.
  app.silent = true;
  app.on('error', (error: unknown) => logger.error({ err: error }, 'koa error'));

  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } catch (error) {
      // In the same step as the request log (one step fewer per request); the line then has the error's status.
      renderError(ctx, error, logger);
    } finally {
      const durationMs = performance.now() - started;
      const route = ctx._matchedRoute === undefined ? 'unmatched' : String(ctx._matchedRoute);
      const { method, status } = ctx;
      metrics.observeRequest({ method, route, status }, durationMs / 1000);
      // tokenName: who asked (a named token's name; pino leaves it out when undefined). Never the token.
      logger.info(
        { method, route, status, durationMs: Math.round(durationMs * 1000) / 1000, tokenName: ctx.state.tokenName },
        'request',
      );
    }
  });
  const router = createRouter(deps);
  app.use(router.routes());
  app.use((ctx) => {
    throw new NotFoundError(`no such path: ${ctx.path.slice(0, 200)}`);
  });
  return app;
}
