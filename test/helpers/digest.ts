// State digests as the tests compare them: sealed reports' lines need the keys (their content
// digests live in the key store), so a digest is taken with the data directory's keys.db, or with
// the server's key store.
import { readFileKeys } from '../../src/keys/read-file-keys.js';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { foldLog, stateDigest } from '../../src/projector/fold-log.js';
import { createReadModel } from '../../src/read-model/read-model.js';
import type { TestServer } from './server.js';
import { memoryLogger } from './server.js';

/** `sha256:<hex>` of `dataDir`'s log (its first `to` records, or all), with its keys.db as it is now. */
export async function logDigest(dataDir: string, to?: number): Promise<string> {
  const log = await openFileLogReader({ dir: dataDir, logger: memoryLogger().logger });
  try {
    const model = createReadModel();
    await foldLog(log, model, to === undefined ? {} : { to: new Map([[0, to]]) });
    return `sha256:${stateDigest(model.reports, await readFileKeys(dataDir))}`;
  } finally {
    await log.close();
  }
}

/** `sha256:<hex>` of what a running server has folded, with its key store. */
export async function serverDigest(server: Pick<TestServer, 'projector' | 'keys'>): Promise<string> {
  return `sha256:${stateDigest(server.projector.model.reports, await server.keys.lookup())}`;
}
