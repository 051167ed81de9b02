// The Koa + PostgreSQL baseline of `make bench`: the service a user would otherwise write on the same
// framework stack (Koa, @koa/router, koa-bodyparser) with the `pg` driver. Fair and well configured:
// a pool of 16 connections over the unix socket (PGHOST), a named (prepared) statement per query,
// the bearer check, body validation and answers the database peers share (peer-http.ts): 200 with
// name and tag; 200 again for an identical retry; 409 for a different one.
// Every insert commits with synchronous_commit on, so a 200 means the row is durable.
// Run as its own process with PORT, HOST, BENCH_TOKEN and the PG* variables of the driver.
import Router from '@koa/router';
import Koa from 'koa';
import pg from 'pg';
import { bearerAuth, jsonBody, parseReport, reportBody, sendError, servePeer } from './peer-http.js';

const pool = new pg.Pool({ max: 16 });

const router = new Router();
router.post('/reports', bearerAuth(process.env['BENCH_TOKEN'] ?? ''), ...jsonBody(), async (ctx) => {
  const report = parseReport(ctx.request.body);
  if (typeof report === 'string') return sendError(ctx, 400, report);
  const inserted = await pool.query({
    name: 'insert-report',
    text: 'INSERT INTO reports (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
    values: [report.id, report.name, report.tag],
  });
  if (inserted.rowCount === 1) {
    ctx.body = reportBody(report);
    return;
  }
  const existing = await pool.query<{ name: string; tag: string | null }>({
    name: 'select-report',
    text: 'SELECT name, tag FROM reports WHERE id = $1',
    values: [report.id],
  });
  const row = existing.rows[0];
  if (row === undefined || row.name !== report.name || row.tag !== report.tag)
    return sendError(ctx, 409, `report ${report.id} already exists with a different name or tag`);
  ctx.body = reportBody(row);
});

await pool.query('CREATE TABLE IF NOT EXISTS reports (id bigint PRIMARY KEY, name text NOT NULL, tag text)');
const app = new Koa();
app.use(router.routes());
servePeer(app, () => pool.end());
