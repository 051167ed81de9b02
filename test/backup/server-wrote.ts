// A server of this version writes reports into a data directory, then stops: what the backup and
// restore suites start from.
import * as assert from 'uvu/assert';
import { startTestServer } from '../helpers/server.js';
import { postReport } from '../http/requests.js';

/** Starts a server on `dataDir`, creates each report of `ids` (200 each), and closes it. */
export async function serverWrote(dataDir: string, ids: readonly string[]): Promise<void> {
  const server = await startTestServer({}, { dataDir });
  try {
    for (const id of ids) assert.is((await postReport(server, id, `report ${id}`)).status, 200);
  } finally {
    await server.close();
  }
}
