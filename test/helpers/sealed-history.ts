// Histories with sealed content written straight into a log, as the service seals it: each plain
// create of the entries sealed under a key of its own, the key durable before its event (keys.db
// beside the file log; the key topic beside a Kafka topic). `then` gets the key store and the keys
// in the order of the creates, to destroy some as a delete or a void create would.
import { encodeEvent } from '../../projections/codec.js';
import { isSealed, type ReportCreated, type ReportEvent } from '../../projections/events.js';
import { contentDigest, sealContent } from '../../projections/sealing.js';
import { loadConfig } from '../../src/config.js';
import { openKafkaKeyStore } from '../../src/keys/kafka-key-store.js';
import { keyIdText, type ContentKey, type KeyStore } from '../../src/keys/key-store.js';
import type { LogMessage } from '../../src/log/event-log.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './kafka.js';
import { memoryLogger } from './server.js';

export type AfterSealing = (keys: KeyStore, sealed: readonly ContentKey[]) => Promise<void>;

/** `event`, a create in the clear, sealed under a new key of `keys` (not yet put). */
export function sealedCreate(
  event: ReportCreated,
  keys: Pick<KeyStore, 'mint'>,
): { event: ReportCreated; key: ContentKey } {
  if (isSealed(event.data)) throw new Error('the create is sealed already');
  const { id, name, tag, idempotencyKey } = event.data;
  const content = tag === undefined ? { name } : { name, tag };
  const key = keys.mint(contentDigest(content));
  const sealed = sealContent(content, keyIdText(key.id), key.secret, {
    id,
    ...(event.expectedversion === undefined ? {} : { expectedversion: event.expectedversion }),
  });
  return {
    event: { ...event, data: { id, sealed, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) } },
    key,
  };
}

function sealAll(entries: readonly ReportEvent[], keys: KeyStore): { messages: LogMessage[]; sealed: ContentKey[] } {
  const sealed: ContentKey[] = [];
  const messages = entries.map((entry): LogMessage => {
    if (entry.type !== 'ReportCreated' || isSealed(entry.data))
      return { key: entry.subject, value: encodeEvent(entry) };
    const { event, key } = sealedCreate(entry, keys);
    sealed.push(key);
    return { key: event.subject, value: encodeEvent(event), contentKey: key };
  });
  return { messages, sealed };
}

/** Appends `entries` to the file log in `dir` (created if missing), its creates sealed; keys.db carries the keys. */
export async function appendSealedToFileLog(
  dir: string,
  entries: readonly ReportEvent[],
  then: AfterSealing = () => Promise.resolve(),
): Promise<ContentKey[]> {
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    const { messages, sealed } = sealAll(entries, log.keyStore());
    if (messages.length > 0) await log.append(messages);
    await then(log.keyStore(), sealed);
    return sealed;
  } finally {
    await log.close();
  }
}

/** Appends `entries` to `topic` (created if missing), its creates sealed under keys put in its key topic first. */
export async function appendSealedToTopic(
  brokers: string,
  topic: string,
  entries: readonly ReportEvent[],
  then: AfterSealing = () => Promise.resolve(),
): Promise<ContentKey[]> {
  const { kafka } = loadConfig(kafkaEnv(brokers, topic));
  if (!kafka) throw new Error('kafkaEnv gave no Kafka configuration');
  const { logger } = memoryLogger();
  const keys = await openKafkaKeyStore({ config: kafka, logger, writeTimeoutMs: 10_000 });
  const log = await openKafkaLog({ config: kafka, logger, writeTimeoutMs: 10_000 }).catch(async (error: unknown) => {
    await keys.close();
    throw error;
  });
  try {
    const { messages, sealed } = sealAll(entries, keys);
    await keys.put(sealed);
    if (messages.length > 0) await log.append(messages.map(({ key, value }) => ({ key, value })));
    await then(keys, sealed);
    return sealed;
  } finally {
    await log.close();
    await keys.close();
  }
}
