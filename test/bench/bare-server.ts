// The baseline of the bench: the same framework stack as the service (Koa, @koa/router,
// koa-bodyparser) and nothing else: no auth, no validation, no log, no logging. It keeps the parsed
// body in a Map and answers what the service answers. Run as its own process with PORT and HOST.
import Router from '@koa/router';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';

interface NewReport {
  readonly id: unknown;
  readonly name?: unknown;
  readonly tag?: unknown;
}

const reports = new Map<string, NewReport>();
const app = new Koa();
const router = new Router();

router.post('/reports', bodyParser(), (ctx) => {
  const report = ctx.request.body as NewReport;
  reports.set(String(report.id), report);
  ctx.body = { name: report.name, tag: report.tag };
});
app.use(router.routes());

const port = Number(process.env['PORT'] ?? '0');
const host = process.env['HOST'] ?? '127.0.0.1';
const server = app.listen(port, host, () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${host}:${port}` })}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
