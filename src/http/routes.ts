// The routes: they only translate between HTTP and the service.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { MethodNotAllowedError, UnavailableError } from '../errors.js';
import { asksVersion, versionNeedsRead } from './write-only.js';
import type { EventLog } from '../log/event-log.js';
import type { ProjectionHealth } from '../projector/health.js';
import type { StoredReport } from '../../projections/reports.js';
import type { ReportService } from '../reports/service.js';
import { parseTraceContext } from '../reports/tracing.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import { parsePreconditions, REPORT_CACHE_CONTROL, reportEtag } from './etag.js';
import { READ, WRITE, type Authorize } from './auth.js';
import { jsonReader } from './json-request.js';
import type { Metrics } from './metrics.js';
import { createNewReportParser, parseReportId } from './new-report.js';
import type { FieldLimits } from './schemas.js';
import { eventsRoute, type EventsRouteDeps } from './events-route.js';

export interface RouteDeps {
  readonly service: ReportService;
  readonly log: EventLog;
  readonly metrics: Metrics;
  /** The token and scope check every route of the API calls first (`auth(ctx, 'read')`, `auth(ctx, 'write')`). */
  readonly auth: Authorize;
  /** The token check of /metrics, when REPORTS_METRICS_TOKEN is set. */
  readonly metricsAuth?: Authorize;
  readonly limits: FieldLimits;
  readonly bodyLimitBytes: number;
  readonly openApiDocument: unknown;
  readonly asyncApiDocument: unknown;
  /** Whether the projection has caught up and keeps up (/readyz). */
  readonly health: ProjectionHealth;
  /** GET /events. */
  readonly feed: EventsRouteDeps;
}

function onlyAllow(methods: readonly string[]): Middleware {
  return (ctx) => {
    throw new MethodNotAllowedError(ctx.method, methods);
  };
}

export function createRouter({
  service,
  log,
  metrics,
  auth,
  metricsAuth,
  limits,
  bodyLimitBytes,
  openApiDocument,
  asyncApiDocument,
  health,
  feed,
}: RouteDeps): Router {
  // Paths are exact: /REPORTS and /reports/ are unknown paths (404), not aliases.
  const router = new Router({ sensitive: true, strict: true });
  const parseNewReport = createNewReportParser(limits);
  const get = ['GET', 'HEAD'];

  const readJson = jsonReader(bodyLimitBytes);

  // One handler per route, calling the token check and the body reader in order (rather than
  // three middleware steps each request pays for).
  router.post('/reports', async (ctx) => {
    const grant = auth(ctx, WRITE);
    const readable = grant.scopes.has(READ);
    // Before the body, as a 403 is: a condition that only asks about the report's version is a read.
    if (!readable && asksVersion(header(ctx, 'if-match'), header(ctx, 'if-none-match')))
      throw versionNeedsRead(grant.name);
    const command = parseNewReport(await readJson(ctx));
    const report = await service.create(
      command,
      parseIdempotencyKey(header(ctx, 'idempotency-key')),
      traceContext(ctx),
      preconditions(ctx),
      grant.authContext,
      readable,
    );
    sendReport(ctx, report);
  });
  router.all('/reports', onlyAllow(['POST']));

  // GET answers HEAD too (@koa/router), and Koa sends a HEAD's headers without the body.
  router.get('/reports/:id', async (ctx) => {
    auth(ctx, READ);
    const id = parseReportId(ctx.params['id'] ?? '');
    const answer = await service.read(id, preconditions(ctx));
    ctx.set('ETag', reportEtag(answer.version));
    ctx.set('Cache-Control', REPORT_CACHE_CONTROL);
    if (answer.kind === 'not-modified') ctx.status = 304;
    else sendReport(ctx, answer.report);
  });
  router.delete('/reports/:id', async (ctx) => {
    const { authContext } = auth(ctx, WRITE);
    const id = parseReportId(ctx.params['id'] ?? '');
    await service.delete(
      id,
      parseIdempotencyKey(header(ctx, 'idempotency-key')),
      traceContext(ctx),
      preconditions(ctx),
      authContext,
    );
    ctx.status = 204;
  });
  router.all('/reports/:id', onlyAllow(['GET', 'HEAD', 'DELETE']));

  router.get('/events', eventsRoute(feed, auth));
  router.all('/events', onlyAllow(get));

  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  router.get('/asyncapi.json', (ctx) => {
    ctx.body = asyncApiDocument;
  });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    // The reason (file paths, broker addresses) goes to the server's log through the adapter, not to clients.
    const logHealth = log.health();
    if (!logHealth.available)
      throw new UnavailableError(`not ready: ${logHealth.publicReason ?? 'the event log is unavailable'}`);
    const { caughtUp, stalled, lagEvents } = health.verdict();
    if (!caughtUp) throw new UnavailableError('not ready: the read model is catching up with the event log');
    if (stalled)
      throw new UnavailableError(
        `not ready: the projection has stopped making progress with ${lagEvents} events waiting`,
      );
    if (service.writesFailing())
      throw new UnavailableError(
        'not ready: writes are not confirmed in time (the event log or the projection is stuck)',
      );
    ctx.body = { status: 'ready' };
  });
  router.get('/metrics', async (ctx) => {
    metricsAuth?.(ctx, READ);
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.render();
  });
  for (const path of ['/openapi.json', '/asyncapi.json', '/healthz', '/readyz', '/metrics'])
    router.all(path, onlyAllow(get));
  return router;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The Report body (an absent tag stays absent, never null), as the JSON text with its type given:
 * Koa would otherwise look the type up by name and stringify the object itself, on every write.
 */
function sendReport(ctx: Context, report: StoredReport): void {
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = JSON.stringify(report.tag === undefined ? { name: report.name } : { name: report.name, tag: report.tag });
}

type WithHeaders = { readonly headers: Readonly<Record<string, string | string[] | undefined>> };

/** The raw header: `ctx.get` answers '' both when it is absent and when it is empty, which differ here. */
function header(ctx: WithHeaders, name: string): string | undefined {
  const value = ctx.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The request's If-Match and If-None-Match (400 when malformed). */
function preconditions(ctx: WithHeaders) {
  return parsePreconditions(header(ctx, 'if-match'), header(ctx, 'if-none-match'));
}

/** The W3C trace context of the request; an invalid traceparent is ignored (never a 400), as the W3C asks. */
function traceContext(ctx: WithHeaders) {
  return parseTraceContext(header(ctx, 'traceparent'), header(ctx, 'tracestate'));
}
