// The Emmett peer of `make bench`: the event-sourced service a TypeScript user would otherwise build,
// with @event-driven-io/emmett's DeciderCommandHandler over @event-driven-io/emmett-postgresql's
// event store, on the same Koa stack and HTTP edge as the Koa + PostgreSQL baseline (peer-http.ts)
// and the same PostgreSQL settings (postgres.ts). One stream per report; each command reads the
// stream, folds it with evolve, decides, and appends under the stream version it read, so the
// store's optimistic concurrency decides racing writes (for a stream's first event only with
// emmett-new-streams.ts: emmett-postgresql 0.42.0 does not check that one). A loser of a race is
// run again on the fresh stream (Emmett's retry on version conflict), so it answers as the service
// would: 200 for an identical create, 409 for another body.
// The pool has 16 connections over the unix socket, as the baseline's. Run as its own process with
// PORT, HOST, BENCH_TOKEN and PGHOST, PGPORT, PGUSER, PGDATABASE.
import Router from '@koa/router';
import Koa from 'koa';
import pg from 'pg';
import {
  DeciderCommandHandler,
  IllegalStateError,
  NotFoundError,
  isExpectedVersionConflictError,
} from '@event-driven-io/emmett';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import { enforceNewStreams } from './emmett-new-streams.js';
import { reportDecider, reportStreamId } from './emmett-reports.js';
import { bearerAuth, jsonBody, parseReport, reportBody, sendError, servePeer } from './peer-http.js';

/** The PG* variables the `pg` driver reads, as the connection string Emmett's store is named by. */
function connectionString(env: NodeJS.ProcessEnv): string {
  const host = encodeURIComponent(env['PGHOST'] ?? '/var/run/postgresql');
  return `postgresql://${encodeURIComponent(env['PGUSER'] ?? 'postgres')}@${host}:${env['PGPORT'] ?? '5432'}/${encodeURIComponent(env['PGDATABASE'] ?? 'postgres')}`;
}

const database = connectionString(process.env);
// A pool of our own only to size it like the baseline's (Emmett's own would hold pg's default 10).
const pool = new pg.Pool({ connectionString: database, max: 16 });
const eventStore = enforceNewStreams(getPostgreSQLEventStore(database, { connectionOptions: { pool } }));
const handle = DeciderCommandHandler({
  ...reportDecider,
  mapToStreamId: reportStreamId,
  retry: { onVersionConflict: true },
});

const router = new Router();
const auth = bearerAuth(process.env['BENCH_TOKEN'] ?? '');

router.post('/reports', auth, ...jsonBody(), async (ctx) => {
  const report = parseReport(ctx.request.body);
  if (typeof report === 'string') return sendError(ctx, 400, report);
  try {
    // A create that returns leaves the report as asked: it appended it, or found the same one.
    await handle(eventStore, report.id, { type: 'CreateReport', data: report });
    ctx.body = reportBody(report);
  } catch (error) {
    if (error instanceof IllegalStateError) return sendError(ctx, 409, error.message);
    // Still losing after Emmett's retries: another writer keeps changing this report.
    if (isExpectedVersionConflictError(error))
      return sendError(ctx, 409, `report ${report.id} is being changed by another request`);
    throw error;
  }
});

router.delete('/reports/:id', auth, async (ctx) => {
  const id = ctx.params['id'] ?? '';
  if (!/^-?\d{1,19}$/.test(id) || !Number.isSafeInteger(Number(id)) || String(Number(id)) !== id)
    return sendError(ctx, 400, 'id must be an integer');
  try {
    await handle(eventStore, id, { type: 'DeleteReport', data: { id } });
    ctx.status = 204;
  } catch (error) {
    if (error instanceof NotFoundError) return sendError(ctx, 404, `report ${id} does not exist`);
    if (isExpectedVersionConflictError(error))
      return sendError(ctx, 409, `report ${id} is being changed by another request`);
    throw error;
  }
});

// The schema is created before the first request, not raced by the first 64 of them.
await eventStore.schema.migrate();
const app = new Koa();
app.use(router.routes());
servePeer(app, () => eventStore.close().then(() => pool.end()));
