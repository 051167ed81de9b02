// GET /events in the OpenAPI document (../openapi.ts): the event log as an NDJSON or SSE feed, and
// what one line of it holds (the route is ../events-route.ts).
import { errorResponse, forbidden, header, type Json, methodNotAllowed, unauthorized } from '../openapi-parts.js';

const FEED_LINE_DESCRIPTION =
  'One event a line: `{"position": "N" ("P:O" on Kafka), "time": "<ISO 8601>", "event": <the CloudEvent in structured mode, as on the topic>}`. ' +
  'Sealed content is never sent: a live report\'s ReportCreated comes opened (`"opened": "<key id>"`, data with name and tag), any other ' +
  '(deleted, void) without its box, marked `"erased": true` (data `{id, sealed: {key}}`; `"unopenable": true` when its key does not open it). ' +
  'A record that is not a valid event: `{"position", "time", "invalid": "<reason>"}`. An empty line is a heartbeat. The server ends a feed ' +
  '(a client that reads too slowly, a shutdown) with `{"end": "<why>", "after": "<where to resume>"|null}`.';

/** GET /events: the log as a feed. Streams until the client goes away, so schemathesis leaves it out (test/http/schemathesis.toml). */
export function eventsOperation(): Record<string, Json> {
  return {
    operationId: 'followEvents',
    tags: ['events'],
    summary: 'Follow the event log',
    description:
      'The events from a position on, then every new one as it is applied, until the client goes away: NDJSON by default, server-sent events ' +
      'when the Accept header asks for text/event-stream. Works the same on the file log and on Kafka, from any instance. A heartbeat ' +
      '(REPORTS_FEED_HEARTBEAT_MS) keeps a quiet feed open through proxies. Each feed has a bounded buffer (REPORTS_FEED_BUFFER): a client ' +
      'that reads too slowly is cut off with a last line saying where to resume. At most REPORTS_MAX_FEEDS feeds at once. Needs the scope read.',
    parameters: [
      {
        name: 'after',
        in: 'query',
        required: false,
        description:
          'Start after this position, as the feed and `reports events` print it: `N` on the file log, `P:O[,P:O...]` on Kafka (each partition after its offset; a partition not named from its start). A position past the end of the log (from another log, or from before a backup was restored) is 400. Absent: from the start of the log.',
        schema: { type: 'string', pattern: '^(\\d+|\\d+:\\d+(,\\d+:\\d+)*)$' },
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description:
          'As `after`, and taking its place: an EventSource reconnecting sends the `id:` of the last event it got.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'The feed, streamed until the client goes away or the server ends it',
        content: {
          'application/x-ndjson': { schema: { type: 'string', description: FEED_LINE_DESCRIPTION } },
          'text/event-stream': {
            schema: {
              type: 'string',
              description:
                'Each event `id: <the position to resume after it>` and `data: <the line as in NDJSON>`; a heartbeat is the comment `: heartbeat`; the last line of a feed the server ends is an `event: end` with that line as its data.',
            },
          },
        },
      },
      '400': errorResponse(
        '`after` or `Last-Event-ID` is not a position, or one past the end of the log (or of a partition the topic does not have)',
      ),
      '401': unauthorized,
      '403': forbidden('read'),
      '405': methodNotAllowed,
      '503': errorResponse(
        'REPORTS_MAX_FEEDS feeds are open, the read model is still catching up at start, or the server is shutting down',
        { 'Retry-After': header('Seconds to wait before retrying') },
      ),
    },
  };
}
