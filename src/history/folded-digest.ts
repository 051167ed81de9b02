// The state digest of a data directory's log (or a staging directory's), folded whole (on several
// threads where it is long) with the keys given: how a rewritten history is checked against the
// one it replaces before it is put in place.
import type { Logger } from 'pino';
import type { KeyLookup } from '../keys/key-store.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { foldLog, stateDigest } from '../projector/fold-log.js';
import { createReadModel, type ReadModel } from '../read-model/read-model.js';
import { defaultFoldThreads } from '../read-model/sharded-fold.js';

export interface FoldedDigest {
  /** `sha256:<hex>`. */
  readonly digest: string;
  readonly model: ReadModel;
}

export async function foldedDigest(
  dir: string,
  keys: () => Promise<KeyLookup>,
  logger: Logger,
  { signal, onProgress }: { signal?: AbortSignal; onProgress?: (records: number) => void } = {},
): Promise<FoldedDigest> {
  const log = await openFileLogReader({ dir, logger });
  try {
    const model = createReadModel();
    await foldLog(log, model, {
      threads: defaultFoldThreads(),
      ...(signal ? { signal } : {}),
      onProgress: ({ records }) => onProgress?.(records),
    });
    signal?.throwIfAborted();
    return { digest: `sha256:${stateDigest(model.reports, await keys())}`, model };
  } finally {
    await log.close();
  }
}
