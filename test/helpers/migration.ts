// The ends of a migration for the tests of copy-log.ts: a file log as the source (read beside, as
// `reports migrate --to-kafka` reads it) or as the target (held, as `--to-file` writes it), a
// Kafka topic as either, and a target that stops at its k-th write (a key put or destroyed, an
// append): what a copy killed at that moment leaves behind.
import { loadConfig, type KafkaConfig } from '../../src/config.js';
import { openKafkaKeyStore } from '../../src/keys/kafka-key-store.js';
import { openKafkaToolKeys } from '../../src/keys/kafka-tool-keys.js';
import type { DeletionRecords } from '../../src/keys/deletion-records.js';
import type { ContentKey, KeyStore } from '../../src/keys/key-store.js';
import { fileToolKeys } from '../../src/keys/tool-keys.js';
import type { EventLog } from '../../src/log/event-log.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import type { MigrationSource } from '../../src/migrate/copy-log.js';
import type { MigrationTarget } from '../../src/migrate/target-writer.js';
import { kafkaEnv } from './kafka.js';
import { basedOn, created, deleted } from './events.js';
import { appendToFileLog } from './file-history.js';
import { appendSealedToFileLog } from './sealed-history.js';
import { memoryLogger } from './server.js';

export interface Closable<T> {
  readonly end: T;
  close(): Promise<void>;
}

export async function fileSource(dir: string): Promise<Closable<MigrationSource>> {
  const log = await openFileLogReader({ dir, logger: memoryLogger().logger });
  const keys = fileToolKeys(dir);
  return { end: { log, keys }, close: async () => void (await Promise.all([log.close(), keys.close()])) };
}

export async function fileTarget(dir: string): Promise<Closable<MigrationTarget>> {
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  return { end: { log, keys: log.keyStore() }, close: () => log.close() };
}

const kafkaConfig = (brokers: string, topic: string) => loadConfig(kafkaEnv(brokers, topic)).kafka as KafkaConfig;

export async function kafkaSource(brokers: string, topic: string): Promise<Closable<MigrationSource>> {
  const config = kafkaConfig(brokers, topic);
  const { logger } = memoryLogger();
  const log = await openKafkaLog({ config, logger, writeTimeoutMs: 10_000, createTopic: false, readOnly: true });
  const keys = await openKafkaToolKeys({ config, logger, writeTimeoutMs: 10_000 });
  return { end: { log, keys }, close: async () => void (await Promise.all([log.close(), keys.close()])) };
}

export async function kafkaTarget(brokers: string, topic: string): Promise<Closable<MigrationTarget>> {
  const config = kafkaConfig(brokers, topic);
  const { logger } = memoryLogger();
  const log = await openKafkaLog({ config, logger, writeTimeoutMs: 10_000 });
  const keys = await openKafkaKeyStore({ config, logger, writeTimeoutMs: 10_000 });
  return { end: { log, keys }, close: async () => void (await Promise.all([log.close(), keys.close()])) };
}

/** `real` with `overrides` in place of some methods; every other method bound to `real`. */
export function intercept<T extends object>(real: T, overrides: Partial<T>): T {
  return new Proxy(real, {
    get(target, property) {
      if (property in overrides) return overrides[property as keyof T];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Every name and tag the source history holds: none may be in a file of the target in the clear. */
export const SOURCE_NAMES = [
  'plain live',
  'plain gone',
  'old tag',
  'back again',
  'lost key',
  ...Array.from({ length: 12 }, (_, i) => `name ${i + 1}`),
];

/**
 * Plain events of an earlier version (one report live, one deleted), then sealed ones: reports 1 to
 * 12, 4, 8 and 12 deleted (their keys destroyed), 4 created again, 13 live with its key lost.
 */
export async function writeFileSource(dir: string): Promise<void> {
  await appendToFileLog(dir, [created('100', 'plain live', 'old tag'), created('101', 'plain gone'), deleted('101')]);
  const creates = Array.from({ length: 12 }, (_, i) =>
    created(String(i + 1), `name ${i + 1}`, i % 3 === 0 ? 'tagged' : undefined),
  );
  const history = [
    ...creates,
    deleted('4'),
    deleted('8'),
    deleted('12'),
    basedOn(created('4', 'back again'), 2),
    created('13', 'lost key'),
  ];
  await appendSealedToFileLog(dir, history, (keys, sealed) =>
    keys.destroy([3, 7, 11, 13].map((i) => (sealed[i] as ContentKey).id)),
  );
}

export class StoppedHere extends Error {}

/**
 * `target` whose `k`-th write (from 1: a key put, a key destroy, an append) throws before it is
 * made, as a copy killed then would leave it. `writes()` counts the writes asked for.
 */
export function stoppingAt(target: MigrationTarget, k: number): { end: MigrationTarget; writes: () => number } {
  let writes = 0;
  const write =
    <A extends unknown[], R>(real: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      writes += 1;
      return writes === k ? Promise.reject(new StoppedHere(`stopped at write ${k}`)) : real(...args);
    };
  const { log, keys } = target;
  const records = keys as Partial<DeletionRecords>;
  const wrappedKeys = intercept<KeyStore & Partial<DeletionRecords>>(keys, {
    put: write(keys.put.bind(keys)),
    destroy: write(keys.destroy.bind(keys)),
    // keys.db's record of a deletion (its key destroyed with it): a write of its own.
    ...(records.recordDeletions === undefined ? {} : { recordDeletions: write(records.recordDeletions.bind(keys)) }),
  });
  const wrappedLog = intercept<EventLog>(log, { append: write(log.append.bind(log)) });
  return { end: { log: wrappedLog, keys: wrappedKeys }, writes: () => writes };
}
