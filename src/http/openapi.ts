// The OpenAPI 3.1 document, generated from the TypeBox schemas that validate requests.
import { ErrorBody, StatusBody, newReportSchema, reportSchema, type FieldLimits } from './schemas.js';
import { SERVICE_CONTACT } from '../version.js';
import {
  cacheControl,
  errorResponse,
  etagHeader,
  forbidden,
  forbiddenText,
  header,
  idempotencyKey,
  ifMatch,
  ifNoneMatch,
  insufficientScope,
  type Json,
  jsonContent,
  keyReused,
  methodNotAllowed,
  notModified,
  preconditionFailed,
  ref,
  reportIdParam,
  toJsonSchema,
  unauthorized,
  unavailable,
  unopened,
} from './openapi-parts.js';

export interface OpenApiOptions {
  /** Whether /metrics asks for a token of its own (REPORTS_METRICS_TOKEN). */
  readonly metricsToken?: boolean;
}

export function createOpenApiDocument(
  limits: FieldLimits,
  version: string,
  { metricsToken = false }: OpenApiOptions = {},
): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Report Store',
      version,
      description: 'Create, read and delete reports. Event-sourced: every change is an event on an append-only log.',
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { ...SERVICE_CONTACT },
    },
    // Relative: the API is where this document was fetched from, whatever HOST and PORT (or a proxy
    // in front) made that address. `reports schema openapi` prints the same document.
    servers: [{ url: '/', description: 'The address this document was fetched from' }],
    tags: [
      { name: 'reports', description: 'Reports in the store' },
      { name: 'events', description: 'The event log as a feed' },
      {
        name: 'operations',
        description: 'Health, readiness, metrics, this document and the AsyncAPI document of the events',
      },
    ],
    security: [{ bearerAuth: [] }],
    paths: {
      '/reports': {
        post: {
          operationId: 'createReport',
          tags: ['reports'],
          summary: 'Create a report',
          description:
            'Creates a report. Retrying with the same id, name and tag returns the existing report and writes nothing. Needs a token with the scope write.',
          parameters: [idempotencyKey, ifMatch, ifNoneMatch],
          requestBody: { required: true, content: jsonContent(ref('NewReport')) },
          responses: {
            '200': {
              description: 'The report, read back from the projected state',
              content: jsonContent(ref('Report')),
            },
            '400': errorResponse('Body is not valid JSON or does not match NewReport'),
            '401': unauthorized,
            '403': forbidden('write'),
            '405': methodNotAllowed,
            '409': errorResponse('A report with this id exists with a different name or tag'),
            '412': preconditionFailed,
            '413': errorResponse('Body larger than the configured limit'),
            '415': errorResponse('Content-Type is not application/json'),
            '422': keyReused,
            '503': unavailable,
          },
        },
      },
      '/reports/{id}': {
        get: {
          operationId: 'getReport',
          tags: ['reports'],
          summary: 'Read a report',
          description:
            'The report as the projected state holds it, caught up with every write made before the request on any instance, with its version as ETag. ' +
            'With If-None-Match naming that version: 304 without a body. Needs a token with the scope read.',
          parameters: [reportIdParam('read'), ifNoneMatch, ifMatch],
          responses: {
            '200': {
              description: 'The report',
              headers: { ETag: etagHeader, 'Cache-Control': cacheControl },
              content: jsonContent(ref('Report')),
            },
            '304': notModified,
            '400': errorResponse('The id is not a decimal int64, or If-Match or If-None-Match is malformed'),
            '401': unauthorized,
            '403': forbidden('read'),
            '404': errorResponse('No such report (never created, or deleted)'),
            '405': methodNotAllowed,
            '412': preconditionFailed,
            '500': unopened,
            '503': unavailable,
          },
        },
        head: {
          operationId: 'headReport',
          tags: ['reports'],
          summary: 'The headers of a report read',
          description:
            'As GET, with the same status and headers (ETag, Content-Type, Content-Length) and no body. Needs a token with the scope read.',
          parameters: [reportIdParam('read'), ifNoneMatch, ifMatch],
          responses: {
            '200': { description: 'The report exists', headers: { ETag: etagHeader, 'Cache-Control': cacheControl } },
            '304': notModified,
            '400': { description: 'The id is not a decimal int64, or If-Match or If-None-Match is malformed' },
            '401': {
              description: 'Missing, malformed or unknown bearer token',
              headers: { 'WWW-Authenticate': header('Bearer realm="reports" (RFC 6750)') },
            },
            '403': { description: forbiddenText('read'), headers: { 'WWW-Authenticate': insufficientScope('read') } },
            '404': { description: 'No such report' },
            '405': {
              description: 'Known path, wrong method',
              headers: { Allow: header('The methods this path accepts') },
            },
            '412': { description: 'A precondition does not hold' },
            '500': { description: 'The content of the report cannot be opened' },
            '503': {
              description: 'Not caught up in time; retry',
              headers: { 'Retry-After': header('Seconds to wait before retrying') },
            },
          },
        },
        delete: {
          operationId: 'deleteReport',
          tags: ['reports'],
          summary: 'Delete a report',
          description:
            'Deletes a single report by id. The id may be created again afterwards. Needs a token with the scope write.',
          parameters: [reportIdParam('delete'), idempotencyKey, ifMatch, ifNoneMatch],
          responses: {
            '204': { description: 'Deleted' },
            '400': errorResponse('The id is not a decimal int64, or If-Match or If-None-Match is malformed'),
            '401': unauthorized,
            '403': forbidden('write'),
            '404': errorResponse('No such report (never created, or already deleted)'),
            '405': methodNotAllowed,
            '412': preconditionFailed,
            '422': keyReused,
            '503': unavailable,
          },
        },
      },
      '/events': { get: eventsOperation() },
      '/openapi.json': operationsGet(
        'getOpenApi',
        'This document',
        'The OpenAPI 3.1 document of this interface, generated at start from the schemas that validate requests, with the configured limits.',
        {
          description: 'OpenAPI 3.1 document',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      ),
      '/asyncapi.json': operationsGet(
        'getAsyncApi',
        'The AsyncAPI 3.1 document of the event topic, for downstream consumers',
        'The topic (REPORTS_TOPIC), its key, header and both events with their fold rules, generated from the schemas the service encodes events with.',
        {
          description: 'AsyncAPI 3.1 document',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      ),
      '/healthz': operationsGet(
        'getHealth',
        'Liveness: 200 while the process runs',
        'Answers 200 while the process can answer at all; it checks neither the log nor the read model (that is /readyz).',
        { description: 'Alive', content: jsonContent(ref('Status')) },
      ),
      '/readyz': operationsGet(
        'getReadiness',
        'Readiness: 200 once the read model has caught up and the log is reachable',
        'Answers 503 while the read model catches up at start, while the log cannot take writes, and when records have waited longer than REPORTS_PROJECTION_STALL_MS without being applied.',
        { description: 'Ready', content: jsonContent(ref('Status')) },
        { '503': errorResponse('Not ready: catching up, the log is unreachable, or the projection has stalled') },
      ),
      '/metrics': metricsToken ? withMetricsToken(metricsOperation()) : metricsOperation(),
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <token>. A token has the scopes read (GET of reports, the event feed) and write (POST, DELETE), or fewer when its line in the tokens file names them; the description of an operation names the scope it needs, and its 403 answers a token without it.',
        },
        ...(metricsToken
          ? {
              metricsAuth: {
                type: 'http',
                scheme: 'bearer',
                description: 'Authorization: Bearer <a token of REPORTS_METRICS_TOKEN>',
              },
            }
          : {}),
      },
      schemas: {
        NewReport: newReportDocument(limits),
        Report: toJsonSchema(reportSchema(limits)),
        Error: toJsonSchema(ErrorBody),
        Status: toJsonSchema(StatusBody),
      },
    },
  };
}

const FEED_LINE_DESCRIPTION =
  'One event a line: `{"position": "N" ("P:O" on Kafka), "time": "<ISO 8601>", "event": <the CloudEvent in structured mode, as on the topic>}`. ' +
  'Sealed content is never sent: a live report\'s ReportCreated comes opened (`"opened": "<key id>"`, data with name and tag), any other ' +
  '(deleted, void) without its box, marked `"erased": true` (data `{id, sealed: {key}}`; `"unopenable": true` when its key does not open it). ' +
  'A record that is not a valid event: `{"position", "time", "invalid": "<reason>"}`. An empty line is a heartbeat. The server ends a feed ' +
  '(a client that reads too slowly, a shutdown) with `{"end": "<why>", "after": "<where to resume>"|null}`.';

/** GET /events: the log as a feed. Streams until the client goes away, so schemathesis leaves it out (test/http/schemathesis.toml). */
function eventsOperation(): Record<string, Json> {
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
          'Start after this position, as the feed and `reports events` print it: `N` on the file log, `P:O[,P:O...]` on Kafka (each partition after its offset; a partition not named from its start). A position beyond the head waits for it. Absent: from the start of the log.',
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
      '400': errorResponse('`after` or `Last-Event-ID` is not a position'),
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

/** NewReport as the parser reads it: a `tag` of null is accepted and treated as absent. */
function newReportDocument(limits: FieldLimits): Json {
  const schema = toJsonSchema(newReportSchema(limits)) as { properties: Record<string, { [key: string]: Json }> };
  const tag = schema.properties['tag'];
  if (tag !== undefined) schema.properties['tag'] = { ...tag, type: ['string', 'null'] };
  return schema;
}

function metricsOperation(): { get: Record<string, Json> } {
  return operationsGet(
    'getMetrics',
    'Prometheus metrics',
    "HTTP requests and their latency, log appends, the projection's lag and health, and the runtime's process_* and nodejs_* series.",
    {
      description: 'Prometheus text format',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
  );
}

/** /metrics when REPORTS_METRICS_TOKEN is set: a token of its own, 401 without it. */
function withMetricsToken({ get }: { get: Record<string, Json> }): Json {
  const unauthorizedMetrics = errorResponse('Missing, malformed or unknown metrics token', {
    'WWW-Authenticate': header('Bearer realm="metrics", with error="invalid_token" when a token was given (RFC 6750)'),
  });
  return {
    get: {
      ...get,
      security: [{ metricsAuth: [] }],
      responses: { ...(get['responses'] as Record<string, Json>), '401': unauthorizedMetrics },
    },
  };
}

function operationsGet(
  operationId: string,
  summary: string,
  description: string,
  ok: Json,
  more: Record<string, Json> = {},
): { get: Record<string, Json> } {
  return {
    get: {
      operationId,
      tags: ['operations'],
      summary,
      description,
      security: [],
      responses: { '200': ok, ...more, '405': methodNotAllowed },
    },
  };
}
