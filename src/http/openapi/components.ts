// The components of the OpenAPI document (../openapi.ts): the bearer schemes (a second one when
// /metrics has a token of its own) and the schemas the operations refer to by $ref.
import { ErrorBody, StatusBody, newReportSchema, reportSchema, type FieldLimits } from '../schemas.js';
import { type Json, toJsonSchema } from '../openapi-parts.js';

export function openApiComponents(limits: FieldLimits, metricsToken: boolean): Json {
  return {
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
  };
}

/** NewReport as the parser reads it: a `tag` of null is accepted and treated as absent. */
function newReportDocument(limits: FieldLimits): Json {
  const schema = toJsonSchema(newReportSchema(limits)) as { properties: Record<string, { [key: string]: Json }> };
  const tag = schema.properties['tag'];
  if (tag !== undefined) schema.properties['tag'] = { ...tag, type: ['string', 'null'] };
  return schema;
}
