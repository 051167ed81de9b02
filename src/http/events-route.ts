// GET /events: the log as a feed (src/feed/). Checks the token, the position and the cap, then
// answers 200 and streams until the client goes away or the server ends the feed; every refusal
// comes before the first byte, as an Error body.
import type { Context } from 'koa';
import { BadRequestError, UnavailableError } from '../errors.js';
import type { FeedLimits } from '../config.js';
import type { FeedHub } from '../feed/feed-hub.js';
import type { FeedSource } from '../feed/feed-options.js';
import { cursorAfter, FEED_CONTENT_TYPES, type FeedFormat } from '../feed/feed-frames.js';
import { shownLine } from '../feed/shown-line.js';
import type { KeyStore } from '../keys/key-store.js';
import type { Cursor } from '../log/event-log.js';
import { cursorFits, describeMisfit, parseCursor, startMisfit, type LogKind } from '../log/positions.js';
import { beforeDeadline } from '../log/settle-within.js';
import type { Logger } from 'pino';
import { READ, type Authorize } from './auth.js';
import type { ReportEvent } from '../../projections/events.js';

export interface EventsRouteDeps {
  readonly hub: FeedHub;
  readonly source: FeedSource;
  /** Where the log ends now (EventLog.head): a start past it is refused. */
  readonly head: () => Promise<Cursor>;
  readonly keys: Pick<KeyStore, 'get'>;
  readonly kind: LogKind;
  readonly limits: FeedLimits;
  /** Whether the projector has caught up at start: before, the feed could not hand over what it applies. */
  readonly caughtUp: () => boolean;
  /** The event a record's value was encoded from in this process, if it was (the projector's EncodedEvents). */
  readonly known: (value: Buffer) => ReportEvent | undefined;
  readonly logger: Logger;
}

/**
 * `text/event-stream` when the client names it (an EventSource sends just that), NDJSON otherwise.
 * Weights count: `;q=0` says "not acceptable" (RFC 9110, 12.4.2), and NDJSON named with a higher
 * weight is preferred. Other parameters (`charset=utf-8`) do not matter.
 */
export function feedFormat(accept: string): FeedFormat {
  const weights = new Map<string, number>();
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter));
    if (!weights.has(type)) weights.set(type, q === undefined ? 1 : Number(q.replace(/^q\s*=\s*/, '')) || 0);
  }
  const sse = weights.get(FEED_CONTENT_TYPES.sse) ?? 0;
  return sse > 0 && sse >= (weights.get(FEED_CONTENT_TYPES.ndjson) ?? 0) ? 'sse' : 'ndjson';
}

/** How long the route waits for the log to say where it ends, before it lets the feed start unchecked. */
const HEAD_WAIT_MS = 5000;

/** Where a feed starts: the next offset of each partition, and the parameter that said so. */
export interface FeedStart {
  readonly from: Map<number, number>;
  readonly named: 'Last-Event-ID' | 'after';
}

/**
 * Where the feed starts: after `Last-Event-ID` (an EventSource reconnecting sends it, with the URL
 * it first opened, so it wins over `after`), else after `?after=`, else at the log's start.
 */
export function feedStart(
  after: string | string[] | undefined,
  lastEventId: string | undefined,
  kind: LogKind,
): FeedStart {
  const [name, text] =
    lastEventId !== undefined && lastEventId !== ''
      ? (['Last-Event-ID', lastEventId] as const)
      : (['after', after] as const);
  if (text === undefined) return { from: new Map(), named: name };
  if (Array.isArray(text)) throw new BadRequestError('after may be given once');
  const cursor = parseCursor(text);
  const form =
    kind === 'file' ? 'N (a position reports events prints)' : 'P:O[,P:O...] (positions reports events prints)';
  if (cursor === undefined || !cursorFits(cursor, kind))
    throw new BadRequestError(`${name} must be ${form}, got "${text.slice(0, 100)}"`);
  return { from: cursorAfter(cursor), named: name };
}

/**
 * Refuses a start past the log's end (positions.ts, startMisfit): a position no feed of this log
 * has handed out; taken as it is, the feed would skip every event written up to it. Checked
 * without the log while it is within what this process has applied (every reconnect of a client
 * that keeps up: no broker round trip, nothing a paused broker or a moved leader could fail).
 * Beyond it the log is asked; if it does not say within HEAD_WAIT_MS, the feed starts unchecked
 * (it then waits for the log to get there) rather than refusing a client (an EventSource gives up
 * on any answer but 200).
 */
async function checkStart(
  { from, named }: FeedStart,
  applied: Cursor,
  head: () => Promise<Cursor>,
  kind: LogKind,
): Promise<void> {
  if (startMisfit(from, applied) === undefined) return;
  const end = await beforeDeadline(head(), HEAD_WAIT_MS).catch(() => undefined);
  const misfit = end === undefined ? undefined : startMisfit(from, end);
  if (misfit === undefined) return;
  const restart = misfit.kind === 'past-end' ? '; start again without it' : '';
  throw new BadRequestError(`${named} ${describeMisfit(misfit, kind)}${restart}`);
}

/** The handler of GET (and HEAD) /events: a token with the scope read (401, then 403, before anything else). */
export function eventsRoute(
  { hub, source, head, keys, kind, limits, caughtUp, known, logger }: EventsRouteDeps,
  auth: Authorize,
) {
  return async (ctx: Context): Promise<void> => {
    auth(ctx, READ);
    const lastEventId = ctx.headers['last-event-id'];
    const start = feedStart(ctx.query['after'], Array.isArray(lastEventId) ? lastEventId.join(',') : lastEventId, kind);
    const format = feedFormat(ctx.get('Accept'));
    if (!caughtUp()) throw new UnavailableError('the read model is catching up with the event log; retry shortly');
    if (start.from.size > 0) await checkStart(start, source.cursor(), head, kind);
    const { from } = start;
    hub.admit();
    // No-transform and no buffering: a proxy that holds events back until it has a bufferful breaks a feed.
    const headers = {
      'Content-Type': FEED_CONTENT_TYPES[format],
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    };
    ctx.status = 200;
    if (ctx.method === 'HEAD') {
      ctx.set(headers);
      return;
    }
    ctx.respond = false;
    const { res } = ctx;
    res.writeHead(200, headers);
    res.flushHeaders();
    const ended = await hub.run(res, {
      source,
      from,
      format,
      kind,
      show: (record) => shownLine(record, kind, (_position, id) => keys.get(id), known),
      bufferBytes: limits.bufferBytes,
      heartbeatMs: limits.heartbeatMs,
      // Asked again of the tokens in use at each event: a feed never ends by itself, so the check at
      // its start would let a removed token read every later report.
      allowed: () => {
        try {
          auth(ctx, READ);
          return true;
        } catch {
          return false;
        }
      },
    });
    // A client cut off (or one the server ended) is worth a line: it resumes from `after`.
    if (ended.by === 'server') logger.info({ reason: ended.reason, after: ended.after }, 'feed ended by the server');
  };
}
