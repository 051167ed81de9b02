// The Koa + PostgreSQL baseline of `make bench`: the service a user would otherwise write on the same
// framework stack (Koa, @koa/router, koa-bodyparser) with the `pg` driver. Fair and well configured:
// a pool of 16 connections over the unix socket (PGHOST), a named (prepared) statement per query,
// the same bearer check as the service (SHA-256 digests compared in constant time), the same body
// validation a user would write on JSON.parse (an integer id, a non-empty name, an optional tag, both
// at most 4096 characters; 400 otherwise, 415 for another Content-Type, 64 KiB bodies), and the
// same answers (200 with name and tag; 200 again for an identical retry; 409 for a different one).
// Every insert commits with synchronous_commit on, so a 200 means the row is durable.
// Run as its own process with PORT, HOST, BENCH_TOKEN and the PG* variables of the driver.
import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import bodyParser from 'koa-bodyparser';
import pg from 'pg';

const MAX_CHARS = 4096;
const pool = new pg.Pool({ max: 16 });
const tokenDigest = createHash('sha256').update(process.env['BENCH_TOKEN'] ?? '').digest();

function authorized(ctx: Context): boolean {
  const header = ctx.get('Authorization');
  if (!header.startsWith('Bearer ')) return false;
  return timingSafeEqual(createHash('sha256').update(header.slice(7)).digest(), tokenDigest);
}

interface NewReport {
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
}

function validText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_CHARS;
}

function parseReport(body: unknown): NewReport | string {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object';
  const { id, name, tag } = body as Record<string, unknown>;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return 'id must be an integer';
  if (!validText(name)) return 'name must be a non-empty string';
  if (tag !== undefined && !validText(tag)) return 'tag must be a non-empty string';
  return { id: String(id), name, tag: tag ?? null };
}

function error(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { error: status, message };
}

const router = new Router();
router.post('/reports', async (ctx, next) => {
  if (!authorized(ctx)) {
    ctx.set('WWW-Authenticate', 'Bearer realm="reports"');
    return error(ctx, 401, 'missing or unknown bearer token');
  }
  if (!ctx.is('application/json')) return error(ctx, 415, 'Content-Type must be application/json');
  await next();
}, bodyParser({ enableTypes: ['json'], jsonLimit: '64kb' }), async (ctx) => {
  const report = parseReport(ctx.request.body);
  if (typeof report === 'string') return error(ctx, 400, report);
  const inserted = await pool.query({ name: 'insert-report', text: 'INSERT INTO reports (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', values: [report.id, report.name, report.tag] });
  if (inserted.rowCount === 1) {
    ctx.body = { name: report.name, ...(report.tag === null ? {} : { tag: report.tag }) };
    return;
  }
  const existing = await pool.query<{ name: string; tag: string | null }>({ name: 'select-report', text: 'SELECT name, tag FROM reports WHERE id = $1', values: [report.id] });
  const row = existing.rows[0];
  if (row === undefined || row.name !== report.name || row.tag !== report.tag) return error(ctx, 409, `report ${report.id} already exists with a different name or tag`);
  ctx.body = { name: row.name, ...(row.tag === null ? {} : { tag: row.tag }) };
});

await pool.query('CREATE TABLE IF NOT EXISTS reports (id bigint PRIMARY KEY, name text NOT NULL, tag text)');
const app = new Koa();
app.use(router.routes());
const port = Number(process.env['PORT'] ?? '0');
const host = process.env['HOST'] ?? '127.0.0.1';
const server = app.listen(port, host);
const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
