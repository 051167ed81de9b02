// A delete whose event is written but whose content key the store does not destroy in time is
// answered 503, and counts against readiness as any 503: the write did not do what it says. (On
// Kafka the key topic's partition may be led by the broker that stopped answering while the event
// topic's is not; counted as confirmed, such deletes kept /readyz at 200 while no write succeeded.)
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { UnavailableError } from '../../src/errors.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import type { KeyCarrier } from '../../src/log/capabilities.js';
import { Projector } from '../../src/projection/projector.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { ReportService } from '../../src/reports/service.js';
import { rejection } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface Context {
  dir: string;
  log: FileLog & KeyCarrier;
  projector: Projector;
  keys: KeyStore;
  nowMs: number;
  service: ReportService;
}

const test = suite<Context>('ReportService: a delete whose key is not destroyed in time');

test.before.each(async (context) => {
  const { logger } = memoryLogger();
  context.dir = await tempDir('reports-unconfirmed-erasure-');
  context.log = await openFileLog({ dir: context.dir, logger });
  context.nowMs = 0;
  context.projector = new Projector({ log: context.log, logger, retryDelayMs: 10 });
  context.projector.start();
  await context.projector.caughtUp();
  context.keys = context.log.keyStore();
  // The key store takes puts (they travel with the log's group commit) but confirms no destruction.
  const refuse = () => Promise.reject(new UnavailableError('the key store did not answer'));
  const keys: KeyStore = Object.assign(Object.create(context.keys) as KeyStore, { destroy: refuse, recordDeletions: refuse });
  const envelope = { source: 'urn:report-store:test', newId: () => crypto.randomUUID(), time: () => new Date().toISOString() };
  context.service = new ReportService({ keys, log: context.log, projector: context.projector, writeTimeoutMs: 200, logger, clockMs: () => context.nowMs, ...envelope });
});

test.after.each(async ({ projector, keys, service, log, dir }) => {
  service.stop();
  await projector.stop();
  await keys.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

test('is answered 503 and turns readiness, though its event was written', async (context) => {
  await context.service.create({ id: '1', name: 'Performance review' });
  assert.is(context.service.writesFailing(), false, 'the create was confirmed');
  context.nowMs = 10;
  const answer = await rejection(context.service.delete('1'));
  assert.instance(answer, UnavailableError);
  assert.match((answer as Error).message, /destruction of its content key is not confirmed/);
  assert.is(context.projector.model.reports.has('1'), false, 'the delete event was written and folded');
  assert.is(context.service.writesFailing(), true, 'a write that began after the last confirmed one was answered 503');
});

test.run();
