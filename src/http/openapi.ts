// The OpenAPI 3.1 document, generated from the TypeBox schemas that validate requests. The
// operations and components are built in openapi/; this file puts them in their order.
import type { FieldLimits } from './schemas.js';
import { SERVICE_CONTACT } from '../version.js';
import type { Json } from './openapi-parts.js';
import { openApiComponents } from './openapi/components.js';
import { eventsOperation } from './openapi/events-operation.js';
import { operationsPaths } from './openapi/operations-endpoints.js';
import {
  createReportOperation,
  deleteReportOperation,
  getReportOperation,
  headReportOperation,
} from './openapi/reports-operations.js';

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
    // The order of the paths is the order of the document: reports, events, then operations.
    paths: {
      '/reports': { post: createReportOperation() },
      '/reports/{id}': { get: getReportOperation(), head: headReportOperation(), delete: deleteReportOperation() },
      '/events': { get: eventsOperation() },
      ...operationsPaths(metricsToken),
    },
    components: openApiComponents(limits, metricsToken),
  };
}
