// The events as one plain JSON Schema (2020-12) document, generated from the TypeBox definitions.
// `projections/events.schema.json` is this output, shipped with the package; a test keeps the two equal.
import { ReportCreated, ReportDeleted } from './events.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A TypeBox schema as plain JSON (TypeBox's symbol keys dropped), without its own `$id`. */
export function plainSchema(schema: object): Json {
  const { $id: _id, ...rest } = JSON.parse(JSON.stringify(schema)) as Record<string, Json>;
  return rest;
}

export function eventsJsonSchema(): Json {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'urn:report-store:events',
    title: 'Report Store events',
    description:
      'The value of every message on the report events topic: a CloudEvents 1.0 envelope (structured mode). Key: the report id as a decimal string.',
    oneOf: [{ $ref: '#/$defs/ReportCreated' }, { $ref: '#/$defs/ReportDeleted' }],
    $defs: { ReportCreated: plainSchema(ReportCreated), ReportDeleted: plainSchema(ReportDeleted) },
  };
}
