// A ReportService on a real file log in a temporary directory, its projector running and caught up,
// for tests that put a log or a key store that misbehaves in front of it. `clock.nowMs` is the
// service's clock (it starts at 0 and moves only when the test moves it).
import { rm } from 'node:fs/promises';
import type { KeyCarrier } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import { Projector } from '../../src/projector/projector.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { ReportService } from '../../src/reports/service.js';
import { memoryLogger, tempDir } from './server.js';

export interface FileLogService {
  readonly log: FileLog & KeyCarrier;
  readonly projector: Projector;
  readonly keys: KeyStore;
  readonly service: ReportService;
  readonly clock: { nowMs: number };
  close(): Promise<void>;
}

export async function startFileLogService(
  prefix: string,
  {
    logBefore = (log) => log,
    keysBefore = (keys) => keys,
  }: { logBefore?: (log: EventLog) => EventLog; keysBefore?: (keys: KeyStore) => KeyStore } = {},
): Promise<FileLogService> {
  const { logger } = memoryLogger();
  const dir = await tempDir(prefix);
  const log = await openFileLog({ dir, logger });
  const clock = { nowMs: 0 };
  const projector = new Projector({ log, logger, retryDelayMs: 10 });
  projector.start();
  await projector.caughtUp();
  const keys = log.keyStore();
  const envelope = {
    source: 'urn:report-store:test',
    newId: () => crypto.randomUUID(),
    time: () => new Date().toISOString(),
  };
  const service = new ReportService({
    keys: keysBefore(keys),
    log: logBefore(log),
    projector,
    writeTimeoutMs: 200,
    logger,
    clockMs: () => clock.nowMs,
    ...envelope,
  });
  return {
    log,
    projector,
    keys,
    service,
    clock,
    async close() {
      service.stop();
      await projector.stop();
      await keys.close();
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
