// The key topic in the AsyncAPI document (asyncapi.ts): the second channel, whose records are the
// keys that seal reports' names and tags (src/keys/key-record.ts owns their bytes; docs/kafka.md,
// "The key topic"). Only trusted consumers may read it: whoever does can open every live report.
import type { Json } from '../../projections/json-schema.js';

const ref = (path: string) => ({ $ref: `#/${path}` });

/** How a consumer opens sealed content with a key of this topic (the same words as the event schema). */
export const OPENING = [
  "To open a `ReportCreated`'s `data.sealed`: take the record whose key is `data.sealed.key`; decrypt `data.sealed.box` (base64: ciphertext, then the 16-byte GCM tag)",
  "with AES-256-GCM under the record's secret, nonce 12 zero bytes, associated data the UTF-8 bytes of `ReportCreated\\n<data.id>\\n<expectedversion>` (empty when the event has none).",
  'The plaintext is the name in UTF-8, then, when there is a tag, the byte 0xFF and the tag in UTF-8. `openContent` in `projections/sealing.ts` does it.',
].join(' ');

const RECORDS = [
  "A key is written before the event that names it, and destroyed (a tombstone) when its report is deleted or its create was void; compaction then removes the key's record.",
  "Only trusted consumers may read this topic (Kafka ACLs): whoever reads it can open every live report's name and tag.",
  "A consumer forgets what it opened with a key once it reads the key's tombstone, and a report's content once it folds the report's `ReportDeleted`.",
].join(' ');

const NO_HEADERS = { type: 'object', maxProperties: 0, description: "The key topic's records carry no headers" };

function keyMessage(
  name: string,
  title: string,
  summary: string,
  key: Json,
  payload: Json,
  contentType?: string,
): Json {
  return {
    name,
    title,
    summary,
    description: `${summary} ${RECORDS}`,
    ...(contentType === undefined ? {} : { contentType }),
    headers: NO_HEADERS,
    payload,
    bindings: { kafka: { key, bindingVersion: '0.5.0' } },
  };
}

export function keyTopicChannel(keyTopic: string): Json {
  return {
    address: keyTopic,
    title: 'Content keys',
    summary: "The keys that seal reports' names and tags, for trusted consumers only",
    description: `The compacted topic \`${keyTopic}\` (REPORTS_KEY_TOPIC): one record per content key, under the key id that events name in \`data.sealed.key\`. ${RECORDS} ${OPENING}`,
    messages: {
      ContentKey: ref('components/messages/ContentKey'),
      ContentKeyDestroyed: ref('components/messages/ContentKeyDestroyed'),
      SegmentRoll: ref('components/messages/SegmentRoll'),
    },
    bindings: {
      kafka: {
        topic: keyTopic,
        topicConfiguration: { 'cleanup.policy': ['compact'], 'retention.ms': -1, 'retention.bytes': -1 },
        bindingVersion: '0.5.0',
      },
    },
  };
}

export function keyTopicOperation(): Json {
  return {
    action: 'send',
    channel: ref('channels/contentKeys'),
    title: 'Send content keys',
    summary: 'The service writes a key before the create it seals, and its tombstone when the content is erased',
    description:
      'Written by POST /reports (a key) and by DELETE /reports/{id} or a void create (a tombstone); `~roll` records let Kafka compact a partition whose last record is a tombstone.',
    messages: [
      ref('channels/contentKeys/messages/ContentKey'),
      ref('channels/contentKeys/messages/ContentKeyDestroyed'),
      ref('channels/contentKeys/messages/SegmentRoll'),
    ],
  };
}

export function keyTopicSchemas(): Record<string, Json> {
  return {
    ContentKeyId: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,22}$',
      description: 'The key id, as `data.sealed.key` writes it (base64url of at most 16 bytes)',
    },
    ContentKeyValue: {
      type: 'string',
      format: 'binary',
      minLength: 65,
      maxLength: 65,
      description:
        "65 bytes: the format byte 1, the 32-byte AES-256 secret, the 32-byte SHA-256 of the content it seals (the state digest's line of a live report). A record of another format is skipped.",
    },
    Tombstone: { type: 'null', description: 'No value: a Kafka tombstone' },
  };
}

export function keyTopicMessages(): Record<string, Json> {
  const id = ref('components/schemas/ContentKeyId');
  return {
    ContentKey: keyMessage(
      'ContentKey',
      'Content key',
      "The key of one report's content.",
      id,
      ref('components/schemas/ContentKeyValue'),
      'application/octet-stream',
    ),
    ContentKeyDestroyed: keyMessage(
      'ContentKeyDestroyed',
      'Content key destroyed',
      'The key was destroyed: the content it sealed is erased.',
      id,
      ref('components/schemas/Tombstone'),
    ),
    SegmentRoll: keyMessage(
      'SegmentRoll',
      'Segment roll',
      'Not a key: written so that Kafka can compact a partition whose last record is a tombstone.',
      { type: 'string', const: '~roll' },
      ref('components/schemas/Tombstone'),
    ),
  };
}
