// The state digest of what a running server folded, as `reports replay` prints it: sealed reports'
// lines take their content digests from the server's key store.
import { stateDigest } from '../../src/projection/fold-log.js';
import type { RunningServer } from '../../src/server.js';

export async function serverDigest(server: Pick<RunningServer, 'projector' | 'keys'>): Promise<string> {
  return stateDigest(server.projector.model.reports, await server.keys.lookup());
}
