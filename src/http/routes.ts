// The routes: they only translate between HTTP and the service.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { MethodNotAllowedError, UnavailableError } from '../errors.js';
import type { EventLog } from '../log/event-log.js';
import type { Projector } from '../projector.js';
import type { ReportService } from '../reports/service.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import type { Authenticate } from './auth.js';
import { jsonReader } from './json-request.js';
import type { Metrics } from './metrics.js';
import { createNewReportParser, parseReportId } from './new-report.js';
import type { FieldLimits } from './schemas.js';

export interface RouteDeps {
  readonly service: ReportService;
  readonly projector: Projector;
  readonly log: EventLog;
  readonly metrics: Metrics;
  readonly auth: Authenticate;
  readonly limits: FieldLimits;
  readonly bodyLimitBytes: number;
  readonly openApiDocument: unknown;
  /** /readyz fails when records wait this long without the projection applying any. */
  readonly stallAfterMs: number;
}

function onlyAllow(methods: readonly string[]): Middleware {
  return (ctx) => {
    throw new MethodNotAllowedError(ctx.method, methods);
  };
}

export function createRouter({ service, projector, log, metrics, auth, limits, bodyLimitBytes, openApiDocument, stallAfterMs }: RouteDeps): Router {
  // Paths are exact: /REPORTS and /reports/ are unknown paths (404), not aliases.
  const router = new Router({ sensitive: true, strict: true });
  const parseNewReport = createNewReportParser(limits);
  const get = ['GET', 'HEAD'];

  const readJson = jsonReader(bodyLimitBytes);

  // One handler per route, calling the token check and the body reader in order (rather than
  // three middleware steps each request pays for).
  router.post('/reports', async (ctx) => {
    auth(ctx);
    const command = parseNewReport(await readJson(ctx));
    const report = await service.create(command, parseIdempotencyKey(idempotencyHeader(ctx)));
    ctx.body = report.tag === undefined ? { name: report.name } : { name: report.name, tag: report.tag };
  });
  router.all('/reports', onlyAllow(['POST']));

  router.delete('/reports/:id', async (ctx) => {
    auth(ctx);
    const id = parseReportId(ctx.params['id'] ?? '');
    await service.delete(id, parseIdempotencyKey(idempotencyHeader(ctx)));
    ctx.status = 204;
  });
  router.all('/reports/:id', onlyAllow(['DELETE']));

  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    // The reason (file paths, broker addresses) goes to the server's log through the adapter, not to clients.
    const health = log.health();
    if (!health.available) throw new UnavailableError(`not ready: ${health.publicReason ?? 'the event log is unavailable'}`);
    if (!projector.isCaughtUp()) throw new UnavailableError('not ready: the read model is catching up with the event log');
    const { stalled, lagEvents } = projector.lagAgainst(await log.head(), stallAfterMs);
    if (stalled) throw new UnavailableError(`not ready: the projection has stopped making progress with ${lagEvents} events waiting`);
    ctx.body = { status: 'ready' };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  for (const path of ['/openapi.json', '/healthz', '/readyz', '/metrics']) router.all(path, onlyAllow(get));
  return router;
}

/** The raw header: `ctx.get` answers '' both when it is absent and when it is empty, which differ here. */
function idempotencyHeader(ctx: { readonly headers: Readonly<Record<string, string | string[] | undefined>> }): string | undefined {
  const value = ctx.headers['idempotency-key'];
  return Array.isArray(value) ? value.join(', ') : value;
}
