// A history written again, record for record, into a new log generation: every create written in
// the clear sealed (seal-create.ts) according to its fate (plain-fates.ts): a live report's under a
// new key put in keys.db; a deleted report's under a key whose slot records the deletion, and a
// void create's under a key destroyed, both written so at once, so their secrets never reach the
// disk. Every other record is copied as it is, with its timestamp, so offsets do not move. The keys
// of a batch of records are durable before the next batch is read; none is used until the new
// generation is put in place, so a rewrite cut short leaves keys no event refers to (orphans, swept
// at the next start) and never an event without its key.
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import { contentDigest } from '../../projections/sealing.js';
import type { Deletion } from '../keys/deletion-records.js';
import type { FileKeyStore } from '../keys/file-key-store.js';
import type { ContentKey, KeyId } from '../keys/key-store.js';
import type { EventLog, LogMessage } from '../log/event-log.js';
import type { GenerationRecord, LogGeneration } from '../log/file/log-generation.js';
import { isPlainCreate, type PlainFates } from './plain-fates.js';
import { plainContent, sealCreate, type PlainCreate } from './seal-create.js';

export interface RewriteOptions {
  readonly source: EventLog;
  readonly target: LogGeneration;
  readonly keys: FileKeyStore;
  readonly fates: PlainFates;
  /** Records appended after the history (a restore's deletes), stamped now. */
  readonly tail?: readonly LogMessage[];
  readonly signal?: AbortSignal;
  readonly onProgress?: (records: number) => void;
  readonly now?: () => number;
}

export interface SealedCounts {
  /** Live reports, under keys put in keys.db. */
  readonly live: number;
  /** Deleted reports' creates, under keys whose slots record the deletion. */
  readonly deleted: number;
  /** Void creates, under keys destroyed at once. */
  readonly void: number;
}

/** Key writes of one batch of records: all durable together (one group commit). */
interface KeyWrites {
  readonly put: ContentKey[];
  readonly deletions: Deletion[];
  readonly destroyed: KeyId[];
}

const UNUSED_DIGEST = Buffer.alloc(32);

export async function rewriteHistory({
  source,
  target,
  keys,
  fates,
  tail = [],
  signal,
  onProgress,
  now = Date.now,
}: RewriteOptions): Promise<SealedCounts> {
  const counts = { live: 0, deleted: 0, void: 0 };
  for await (const batch of source.readBatches(new Map([[0, 0]]), signal ? { signal } : {})) {
    const writes: KeyWrites = { put: [], deletions: [], destroyed: [] };
    const records = batch.map(({ key, value, timestampMs, position }): GenerationRecord => {
      if (!isPlainCreate(value)) return { key, value, timestampMs };
      const decoded = decodeEvent(value);
      // The fold's decoder and the schema agree (fold-decode.ts): a record one refuses, the other does too.
      if (!decoded.ok) return { key, value, timestampMs };
      const event = decoded.event as PlainCreate;
      const sealed = sealCreate(event, keyFor(event, fates.fateOf(position.offset), keys, writes, counts));
      return { key, value: encodeEvent(sealed), timestampMs };
    });
    await Promise.all([keys.put(writes.put), keys.recordDeletions(writes.deletions), keys.destroy(writes.destroyed)]);
    await target.write(records);
    onProgress?.(target.records);
  }
  const stamped = now();
  await target.write(tail.map(({ key, value }) => ({ key, value, timestampMs: stamped })));
  return counts;
}

/** A new key for `event`'s content, with the write its fate asks for. */
function keyFor(
  event: PlainCreate,
  fate: ReturnType<PlainFates['fateOf']>,
  keys: FileKeyStore,
  writes: KeyWrites,
  counts: { live: number; deleted: number; void: number },
): ContentKey {
  if (fate?.kind === 'live') {
    const key = keys.mint(contentDigest(plainContent(event)));
    writes.put.push(key);
    counts.live += 1;
    return key;
  }
  // Never put: its secret seals this one content and is forgotten.
  const key = keys.mint(UNUSED_DIGEST);
  if (fate === undefined) {
    writes.destroyed.push(key.id);
    counts.void += 1;
  } else {
    writes.deletions.push({ reportId: event.data.id, version: fate.version, key: key.id });
    counts.deleted += 1;
  }
  return key;
}
