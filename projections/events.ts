// The topic contract for downstream consumers: the CloudEvents 1.0 envelope (structured mode) and
// the two event types. This file imports only @sinclair/typebox so consumers can import it as-is.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** A report id on the wire: the canonical decimal form of a signed 64-bit integer. */
export const ReportIdString = Type.String({
  pattern: '^(0|-?[1-9][0-9]{0,18})$',
  description: 'Report id as a canonical decimal int64 string (no sign for 0, no leading zeros)',
});

const IdempotencyKey = Type.String({ description: 'The Idempotency-Key header of the request that wrote the event' });

/** A key id of the key store, base64url (the embedded log's keys are numbered; Kafka's are random). */
export const KeyIdString = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,32}$',
  description:
    'Id of the content key in the key store (base64url). On Kafka, the key of its record in the key topic (REPORTS_KEY_TOPIC, "<topic>.keys"), which only trusted consumers may read: a value of 65 bytes (the format byte 1, the 32-byte AES-256 secret, the 32-byte SHA-256 of the content), or a tombstone once the key is destroyed (the report was deleted, or the create was void): then the content is erased',
});

export const SealedContent = Type.Object(
  {
    key: KeyIdString,
    box: Type.String({
      pattern: '^[A-Za-z0-9+/]*={0,2}$',
      minLength: 24,
      description:
        'base64 of the AES-256-GCM ciphertext of the content (name in UTF-8, then 0xFF and the tag in UTF-8 when there is one) followed by the 16-byte tag; nonce 12 zero bytes (a key seals one content); associated data "ReportCreated\\n<id>\\n<expectedversion or empty>"',
    }),
  },
  {
    additionalProperties: false,
    description:
      'Name and tag sealed under a key of their own, which the key store destroys when the report is deleted. To open: read the key `key` from the key topic and decrypt `box` with AES-256-GCM under its secret (nonce 12 zero bytes, associated data "ReportCreated\\n<data.id>\\n<expectedversion or empty>", the last 16 bytes of the box the tag); the plaintext is the name in UTF-8, then 0xFF and the tag when there is one. projections/sealing.ts `openContent` does it. No key: the content is erased, and a consumer keeps none of it',
  },
);

/** A create written before erasure existed (or by another producer): name and tag in the clear. */
export const PlainReportCreatedData = Type.Object(
  {
    id: ReportIdString,
    name: Type.String(),
    tag: Type.Optional(Type.String()),
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  {
    additionalProperties: false,
    description:
      'Name and tag in the clear: a create written before erasure, or by another producer; as valid as a sealed one',
  },
);
export type PlainReportCreatedData = Static<typeof PlainReportCreatedData>;

/** A create as this service writes it: name and tag sealed. */
export const SealedReportCreatedData = Type.Object(
  {
    id: ReportIdString,
    sealed: SealedContent,
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  {
    additionalProperties: false,
    description: 'A create as the service writes it: name and tag sealed (`sealed`) in place of `name` and `tag`',
  },
);
export type SealedReportCreatedData = Static<typeof SealedReportCreatedData>;

export const ReportCreatedData = Type.Union([SealedReportCreatedData, PlainReportCreatedData]);
export type ReportCreatedData = Static<typeof ReportCreatedData>;

/** Whether a create's data is sealed. */
export function isSealed(data: ReportCreatedData): data is SealedReportCreatedData {
  return 'sealed' in data;
}

export const ReportDeletedData = Type.Object(
  {
    id: ReportIdString,
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
);
export type ReportDeletedData = Static<typeof ReportDeletedData>;

/**
 * W3C Trace Context `traceparent` (version 00): the CloudEvents distributed-tracing extension
 * attribute. A trace-id or parent-id of all zeros is invalid; said with `not` rather than a
 * lookahead so that validators outside JavaScript (RE2, for one) can compile the pattern.
 */
export const Traceparent = Type.Intersect(
  [
    Type.String({ pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' }),
    Type.Not(Type.String({ pattern: '^00-(0{32}|[0-9a-f]{32}-0{16})-' })),
  ],
  {
    description:
      'W3C Trace Context traceparent of the span that wrote the event (CloudEvents distributed-tracing extension)',
  },
);

const TRACESTATE_KEY = '(?:[a-z][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})';
const TRACESTATE_VALUE = '[\\x20-\\x2b\\x2d-\\x3c\\x3e-\\x7e]{0,255}[\\x21-\\x2b\\x2d-\\x3c\\x3e-\\x7e]';
const TRACESTATE_MEMBER = `${TRACESTATE_KEY}=${TRACESTATE_VALUE}`;
/** The W3C limits: 32 list members, and a header over 512 characters may be dropped whole. */
export const TRACESTATE_MAX_CHARS = 512;

/** W3C Trace Context `tracestate`: vendor entries `key=value`, comma-separated; only beside a traceparent. */
export const Tracestate = Type.String({
  minLength: 1,
  maxLength: TRACESTATE_MAX_CHARS,
  pattern: `^${TRACESTATE_MEMBER}(,${TRACESTATE_MEMBER}){0,31}$`,
  description:
    'W3C Trace Context tracestate that travelled with the traceparent (CloudEvents distributed-tracing extension)',
});

/**
 * The CloudEvents extension attribute `expectedversion`: the version of the report (how many
 * events had taken effect on it) that the write was decided on. The fold voids the event unless
 * the report is still at that version, so a write that reaches the log late changes nothing that
 * was written since. Optional: events without it (earlier writers) fold by existence alone.
 */
export const ExpectedVersion = Type.Integer({
  minimum: 0,
  maximum: 2 ** 31 - 1,
  description:
    'Version of the report the write was decided on: the number of events that had taken effect on this report id before it (0: none; odd: live). The event is void unless the report is still at this version.',
});

/**
 * The CloudEvents authcontext extension: who wrote the event. `authtype` is the kind of principal
 * (the extension's values: `app_user`, `user`, `service_account`, `api_key`, `system`; the service
 * writes `api_key`, a bearer token), `authid` its label (the token's name from the tokens file;
 * absent for an unnamed token). Informational only: neither is sealed or checked by the fold, and
 * any string is accepted, so another producer's values never make an event invalid.
 */
export const AuthType = Type.String({
  minLength: 1,
  description:
    'CloudEvents authcontext extension: the kind of principal that wrote the event; the service writes `api_key` (a bearer token)',
});
export const AuthId = Type.String({
  minLength: 1,
  description:
    'CloudEvents authcontext extension: the principal that wrote the event; the service writes the name of the token (tokens file) and leaves it out for an unnamed token. Never the token itself',
});

/** The authcontext attributes of an event a request writes (authclaims is never written). */
export interface AuthContext {
  readonly authtype: string;
  readonly authid?: string;
}

const RFC3339 = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$';

function cloudEvent<Name extends string, Data extends TSchema>(type: Name, data: Data) {
  return Type.Object(
    {
      specversion: Type.Literal('1.0'),
      id: Type.String({ minLength: 1, description: 'Unique event id (a UUID)' }),
      source: Type.String({ minLength: 1, description: 'URI of the service instance that wrote the event' }),
      type: Type.Literal(type),
      expectedversion: Type.Optional(ExpectedVersion),
      authtype: Type.Optional(AuthType),
      authid: Type.Optional(AuthId),
      subject: ReportIdString,
      // A pattern rather than `format: date-time`: TypeBox rejects formats it has no checker for.
      time: Type.String({ pattern: RFC3339, description: 'RFC 3339 time the event was written' }),
      datacontenttype: Type.Literal('application/json'),
      traceparent: Type.Optional(Traceparent),
      tracestate: Type.Optional(Tracestate),
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
