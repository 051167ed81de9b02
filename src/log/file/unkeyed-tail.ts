// The embedded log writes each group commit's records and the content keys their sealed creates
// need at the same time (events.log and keys.db, each with one sync), and acknowledges the group only
// once both are durable: a create costs one round of syncs, not two after one another. So after a
// crash the last batch of the log may be on disk while some of its keys are not: that batch was never
// acknowledged, and is cut as a torn tail is. No batch before it can be in that state, since a group
// commit starts only once the one before it is durable in both files.
import type { FileHandle } from 'node:fs/promises';
import { isSealed } from '../../../projections/events.js';
import { decodeForFold } from '../../read-model/fold-decode.js';
import { parseKeyId, type KeyId } from '../../keys/key-store.js';
import type { FileKeyStore } from '../../keys/file-key-store.js';
import { BATCH_HEADER_BYTES, checkBatchBody, checkBatchHeader } from './batches.js';
import { decodeFrame } from './frames.js';
import { readAt } from './read-at.js';
import type { BatchPoint, ScanResult } from './recovery.js';
import type { Logger } from 'pino';

/** Whether a sealed create of the batch at `batch` names a key that was never made durable. */
export async function batchLacksKeys(
  file: FileHandle,
  batch: BatchPoint,
  keys: { wasPut(ids: readonly KeyId[]): boolean | Promise<boolean> },
): Promise<boolean> {
  const header = await readAt(file, batch.byte, BATCH_HEADER_BYTES);
  const check = header.length === BATCH_HEADER_BYTES ? checkBatchHeader(header, 0) : undefined;
  if (check?.kind !== 'header') return false;
  const body = await readAt(file, batch.byte + BATCH_HEADER_BYTES, check.bodyBytes);
  const frames = body.length === check.bodyBytes ? checkBatchBody(body, check.frameCount) : undefined;
  if (frames === undefined || !('frames' in frames)) return false;
  const ids = frames.frames.flatMap((frame) => {
    const input = decodeForFold(decodeFrame(body, frame).value);
    return input.ok && input.event.type === 'ReportCreated' && isSealed(input.event.data)
      ? [parseKeyId(input.event.data.sealed.key)]
      : [];
  });
  // A key destroyed since (a void create's) was put: only one never made durable is missing.
  return !(await keys.wasPut(ids));
}

/** Cuts the last batch when a key one of its sealed creates needs was never made durable. */
export async function cutUnkeyedBatch(
  file: FileHandle,
  scan: ScanResult,
  keys: FileKeyStore,
  path: string,
  logger: Logger,
): Promise<ScanResult> {
  const batch = scan.lastBatch;
  if (batch === undefined || !(await batchLacksKeys(file, batch, keys))) return scan;
  const cutBytes = scan.validBytes - batch.byte;
  await file.truncate(batch.byte);
  await file.sync();
  logger.warn(
    { path, bytePosition: batch.byte, recordOffset: batch.offset, cutBytes },
    'cut the last batch off the event log: a content key it needs never reached keys.db (never acknowledged)',
  );
  const { lastBatch: _cut, ...rest } = scan;
  return { ...rest, starts: scan.starts.slice(0, batch.offset - scan.firstOffset), validBytes: batch.byte };
}
