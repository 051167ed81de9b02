// The topic contract for downstream consumers: the CloudEvents 1.0 envelope (structured mode) and
// the two event types. This file imports only @sinclair/typebox so consumers can import it as-is.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** A report id on the wire: the canonical decimal form of a signed 64-bit integer. */
export const ReportIdString = Type.String({
  pattern: '^(0|-?[1-9][0-9]{0,18})$',
  description: 'Report id as a canonical decimal int64 string (no sign for 0, no leading zeros)',
});

export const ReportCreatedData = Type.Object(
  {
    id: ReportIdString,
    name: Type.String(),
    tag: Type.Optional(Type.String()),
    idempotencyKey: Type.Optional(Type.String({ description: 'The Idempotency-Key header of the request that wrote the event' })),
  },
  { additionalProperties: false },
);
export type ReportCreatedData = Static<typeof ReportCreatedData>;

export const ReportDeletedData = Type.Object(
  {
    id: ReportIdString,
    idempotencyKey: Type.Optional(Type.String({ description: 'The Idempotency-Key header of the request that wrote the event' })),
  },
  { additionalProperties: false },
);
export type ReportDeletedData = Static<typeof ReportDeletedData>;

const RFC3339 = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$';

function cloudEvent<Name extends string, Data extends TSchema>(type: Name, data: Data) {
  return Type.Object(
    {
      specversion: Type.Literal('1.0'),
      id: Type.String({ minLength: 1, description: 'Unique event id (a UUID)' }),
      source: Type.String({ minLength: 1, description: 'URI of the service instance that wrote the event' }),
      type: Type.Literal(type),
      subject: ReportIdString,
      // A pattern rather than `format: date-time`: TypeBox rejects formats it has no checker for.
      time: Type.String({ pattern: RFC3339, description: 'RFC 3339 time the event was written' }),
      datacontenttype: Type.Literal('application/json'),
      data,
    },
    { $id: type, title: type, description: `CloudEvents 1.0 structured-mode envelope of ${type}` },
  );
}

export const ReportCreated = cloudEvent('ReportCreated', ReportCreatedData);
export type ReportCreated = Static<typeof ReportCreated>;

export const ReportDeleted = cloudEvent('ReportDeleted', ReportDeletedData);
export type ReportDeleted = Static<typeof ReportDeleted>;

export const ReportEvent = Type.Union([ReportCreated, ReportDeleted]);
export type ReportEvent = Static<typeof ReportEvent>;
export type ReportEventType = ReportEvent['type'];

/** The Kafka header / MIME type of a structured-mode CloudEvent. */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json';
