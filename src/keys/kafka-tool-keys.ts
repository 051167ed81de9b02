// The key topic as a tool reads it (tool-keys.ts): a key store opened without creating the topic,
// followed while the tool runs and closed with it, so the lookups it gives keep answering (a
// closed store forgets every key). A topic written before erasure has no key topic: it holds no
// key, until a server creates the topic, which a later lookup then finds.
import type { Logger } from 'pino';
import type { KafkaConfig } from '../config.js';
import { KeyTopicMissingError } from '../log/kafka/key-topic.js';
import { openKafkaKeyStore, type KafkaKeyStore } from './kafka-key-store.js';
import { NO_KEYS, type KeyLookup } from './key-store.js';
import type { ToolKeys } from './tool-keys.js';

/** How long a tool waits for the key topic to answer. */
const TOOL_READ_TIMEOUT_MS = 30_000;

export interface KafkaToolKeysOptions {
  readonly config: KafkaConfig;
  readonly logger: Logger;
  readonly writeTimeoutMs?: number;
}

export async function openKafkaToolKeys({ config, logger, writeTimeoutMs = TOOL_READ_TIMEOUT_MS }: KafkaToolKeysOptions): Promise<ToolKeys> {
  let store: KafkaKeyStore | undefined;
  const open = async (): Promise<KafkaKeyStore | undefined> => {
    try {
      store ??= await openKafkaKeyStore({ config, logger, writeTimeoutMs, createTopic: false });
    } catch (error) {
      if (!(error instanceof KeyTopicMissingError)) throw error;
    }
    return store;
  };
  await open();
  return {
    async lookup(): Promise<KeyLookup> {
      // Opened at start, the store has read every partition up to its head; a lookup reads on from there.
      return (await (await open())?.lookup()) ?? NO_KEYS;
    },
    async get(id) {
      // Not in memory: the store reads the key's partition up to its head first.
      return (await open())?.get(id);
    },
    async close() {
      await store?.close();
    },
  };
}
