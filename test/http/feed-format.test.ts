// GET /events picks its format from Accept: SSE when the client names text/event-stream with
// a weight above 0 and not below NDJSON's, NDJSON otherwise (feedFormat in src/http/events-route.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { feedFormat } from '../../src/http/events-route.js';

const format = suite('feedFormat');

/** feedFormat as the route calls it: with Koa's `ctx.get('Accept')`, '' when there is none. */
const formatFor = (accept: string | undefined) => feedFormat(accept ?? '');

format('SSE when text/event-stream is preferred, among others or with parameters', () => {
  for (const accept of [
    'text/event-stream',
    'TEXT/Event-Stream',
    'application/json, text/event-stream',
    'text/event-stream;charset=utf-8',
    'text/event-stream, application/x-ndjson;q=0.5',
    'text/event-stream;q=1',
    'text/event-stream;q=0.5, application/json',
  ])
    assert.is(formatFor(accept), 'sse', accept);
});

format('NDJSON when text/event-stream is not named, not preferred, or named with q=0 ("not acceptable")', () => {
  for (const accept of [
    undefined,
    '',
    '*/*',
    'application/x-ndjson',
    'text/html',
    'text/event-streams',
    'text/event-stream;q=0, application/x-ndjson',
    'text/event-stream; q=0.0',
    'text/event-stream;q=0.5, application/x-ndjson',
  ])
    assert.is(formatFor(accept), 'ndjson', String(accept));
});

format.run();
