// The operations paths of the OpenAPI document (../openapi.ts): this document, the AsyncAPI
// document, liveness, readiness and metrics. They need no token, except /metrics when it has its own.
import { errorResponse, header, type Json, jsonContent, methodNotAllowed, ref } from '../openapi-parts.js';

export function operationsPaths(metricsToken: boolean): Record<string, Json> {
  return {
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
  };
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

/** A GET of the operations tag: open to all (`security: []`), and 405 for any other method. */
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
