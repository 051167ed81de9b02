import { rm } from 'node:fs/promises';
import { openFileLog } from '../../../src/log/file/file-log.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { eventLogContract } from '../event-log.contract.js';

eventLogContract('file log', async () => {
  const dir = await tempDir('reports-file-log-');
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  return {
    log,
    async dispose() {
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
