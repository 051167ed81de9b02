// The AsyncAPI 3.1 document of the report events topic, for downstream consumers: both events as
// CloudEvents in structured mode, with payload schemas generated from the same TypeBox definitions
// as projections/events.schema.json, the Kafka key and content-type header, and the fold rules.
import {
  CLOUDEVENTS_CONTENT_TYPE,
  ReportCreated,
  ReportDeleted,
  ReportIdString,
  type ReportEvent,
} from '../../projections/events.js';
import { plainSchema, type Json } from '../../projections/json-schema.js';
import { DEFAULT_TOPIC, type Config } from '../config.js';
import { SERVICE_CONTACT } from '../version.js';
import {
  keyTopicChannel,
  keyTopicMessages,
  keyTopicOperation,
  keyTopicSchemas,
  OPENING,
} from './asyncapi-key-topic.js';

export interface TopicFacts {
  /** The topic (REPORTS_TOPIC), the events channel's address. */
  readonly topic: string;
  /** The key topic (REPORTS_KEY_TOPIC), the keys channel's address; `<topic>.keys` unless given. */
  readonly keyTopic?: string;
}

/** The facts of the configuration the document states (the default topic names on the file log). */
export function topicFacts(config: Config): TopicFacts {
  return { topic: config.kafka?.topic ?? DEFAULT_TOPIC, keyTopic: config.kafka?.keyTopic ?? `${DEFAULT_TOPIC}.keys` };
}

const FOLD = [
  'Fold the topic partition by partition, in offset order (all events of one report are in one partition):',
  '`ReportCreated` for an id that exists is void; `ReportDeleted` for an id that does not exist is void;',
  "an event with an `expectedversion` other than the report's version (the number of events that took effect on that id",
  'so far, deleted ids included) is void: it was decided on a state that later writes changed, and reached the log late.',
  'Every other event applies, and a void one changes nothing. A deleted id may be created again. `projections/` in the package is the',
  'reference implementation of this fold and of decoding (`decodeEvent`); a record that is not a valid event is skipped.',
].join(' ');

const SEALED = [
  "A `ReportCreated` carries the report's name and tag sealed (`data.sealed`: a key id and a box) under a key of their own, which the service destroys when the report is deleted;",
  'events written before erasure (or by other producers) carry `name` and `tag` in the clear, and stay valid.',
].join(' ');

const TRACING = [
  'An event may carry the W3C trace context of the request that wrote it, as the CloudEvents distributed-tracing',
  'extension attributes `traceparent` and `tracestate`; a consumer continues the trace by taking `traceparent` as the',
  'parent (or a link) of the span in which it processes the event. Events without them are equally valid.',
].join(' ');

const AUTH = [
  'An event written by a request says who wrote it, as the CloudEvents authcontext extension attributes `authtype`',
  "(`api_key`: a bearer token) and `authid` (the token's name in the service's tokens file; absent for an unnamed token).",
  'Never the token itself. They are informational (nothing checks or seals them) and optional: events without them are equally valid.',
].join(' ');

const ref = (path: string) => ({ $ref: `#/${path}` });

const EXAMPLE_ENVELOPE = {
  specversion: '1.0',
  source: 'urn:report-store',
  time: '2026-11-22T08:08:12.083Z',
  datacontenttype: 'application/json',
} as const;

const EXAMPLES: Record<ReportEvent['type'], ReportEvent> = {
  ReportCreated: {
    ...EXAMPLE_ENVELOPE,
    id: '8f0c3a52-5b8e-4d0c-9a4e-2f6f0f1c7d3a',
    type: 'ReportCreated',
    subject: '9007199254740993',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'congo=t61rcWkgMzE',
    data: {
      id: '9007199254740993',
      sealed: { key: 'A-tc-Q3-f4Efn6uZ5h_MmA', box: '8m1ucT7Z1SgYAqPqHLf7HVFq8r+lDWeeYQctBcve8JH8Ew==' },
      idempotencyKey: '3f9c2a7e-create-9007199254740993',
    },
  },
  ReportDeleted: {
    ...EXAMPLE_ENVELOPE,
    id: '1d7e9b40-2c6f-4a8d-b3e1-5a0c9f4e6b21',
    type: 'ReportDeleted',
    subject: '9007199254740993',
    expectedversion: 1,
    authtype: 'api_key',
    authid: 'cleanup-job',
    data: { id: '9007199254740993' },
  },
};

function message(type: ReportEvent['type'], title: string, summary: string, fold: string): Json {
  const example = EXAMPLES[type];
  return {
    name: type,
    title,
    summary,
    description: `${summary} The value is the whole CloudEvent (structured mode); the key is its \`subject\`. ${fold}`,
    contentType: CLOUDEVENTS_CONTENT_TYPE,
    headers: ref('components/schemas/KafkaHeaders'),
    payload: ref(`components/schemas/${type}`),
    bindings: { kafka: { key: ref('components/schemas/ReportKey'), bindingVersion: '0.5.0' } },
    examples: [
      {
        name: `${type}Example`,
        summary: `A ${type} event`,
        headers: { 'content-type': CLOUDEVENTS_CONTENT_TYPE },
        payload: example as unknown as Json,
      },
    ],
  };
}

function sendOperation(type: ReportEvent['type'], description: string): Json {
  return {
    action: 'send',
    channel: ref('channels/reportEvents'),
    title: `Send ${type}`,
    summary: `The service appends a ${type} event`,
    description,
    messages: [ref(`channels/reportEvents/messages/${type}`)],
  };
}

export function createAsyncApiDocument({ topic, keyTopic = `${topic}.keys` }: TopicFacts, version: string): Json {
  return {
    asyncapi: '3.1.0',
    info: {
      title: 'Report Store events',
      version,
      description: [
        `Every change to a report is one event on the Kafka topic \`${topic}\`: \`ReportCreated\` or \`ReportDeleted\`,`,
        'a CloudEvents 1.0 envelope in structured mode. The message key is the report id as a canonical decimal string.',
        'Ids are decimal strings everywhere because JSON numbers cannot hold every int64 exactly.',
        `\n\n${SEALED} The keys are on the compacted topic \`${keyTopic}\`, for trusted consumers only. ${OPENING}`,
        `\n\n${FOLD}\n\n${TRACING}\n\n${AUTH}`,
      ].join(' '),
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      contact: { ...SERVICE_CONTACT },
      tags: [{ name: 'reports', description: 'Events of reports' }],
    },
    // A server whose address is a variable: broker addresses belong to a deployment, not to this
    // contract (and the document is public), but a consumer's tools still learn it is Kafka.
    servers: {
      kafka: {
        host: '{bootstrapServer}',
        protocol: 'kafka',
        title: 'The Kafka cluster of the deployment',
        description: 'The brokers the service writes to (KAFKA_BROKERS); the document names none.',
        variables: {
          bootstrapServer: {
            description: 'host:port of a bootstrap server of the deployment',
            examples: ['kafka:9092'],
          },
        },
      },
    },
    defaultContentType: CLOUDEVENTS_CONTENT_TYPE,
    channels: {
      reportEvents: {
        address: topic,
        title: 'Report events',
        summary: 'The append-only history of every report',
        description: `The topic \`${topic}\` (REPORTS_TOPIC). Retention is infinite and the topic is never compacted: the service refuses to start on a topic that would lose history. ${FOLD}`,
        messages: {
          ReportCreated: ref('components/messages/ReportCreated'),
          ReportDeleted: ref('components/messages/ReportDeleted'),
        },
        bindings: {
          kafka: {
            topic,
            topicConfiguration: { 'cleanup.policy': ['delete'], 'retention.ms': -1, 'retention.bytes': -1 },
            bindingVersion: '0.5.0',
          },
        },
      },
      contentKeys: keyTopicChannel(keyTopic),
    },
    operations: {
      sendReportCreated: sendOperation(
        'ReportCreated',
        'Written by POST /reports for a new id (an identical retry writes nothing).',
      ),
      sendReportDeleted: sendOperation('ReportDeleted', 'Written by DELETE /reports/{id} for a report that exists.'),
      sendContentKeys: keyTopicOperation(),
    },
    components: {
      schemas: {
        ReportCreated: plainSchema(ReportCreated),
        ReportDeleted: plainSchema(ReportDeleted),
        ReportKey: plainSchema(ReportIdString),
        KafkaHeaders: {
          type: 'object',
          properties: {
            'content-type': {
              type: 'string',
              const: CLOUDEVENTS_CONTENT_TYPE,
              description: 'A structured-mode CloudEvent: the value is the whole event as JSON',
            },
          },
          required: ['content-type'],
        },
        ...keyTopicSchemas(),
      },
      messages: {
        ReportCreated: message(
          'ReportCreated',
          'Report created',
          'A report was created with this id, name and optional tag (sealed, or in the clear when written before erasure).',
          'Fold: void when the id exists already or its version is not `expectedversion`; otherwise the report exists from now on.',
        ),
        ReportDeleted: message(
          'ReportDeleted',
          'Report deleted',
          'The report with this id was deleted: its content key is destroyed, and a consumer forgets the name and tag it holds.',
          'Fold: void when the id does not exist or its version is not `expectedversion`; otherwise the report no longer exists and the id may be created again.',
        ),
        ...keyTopicMessages(),
      },
    },
  };
}
