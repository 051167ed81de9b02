// A delete whose event is written but whose content key the store does not destroy in time is
// answered 503, and counts against readiness as any 503: the write did not do what it says. (On
// Kafka the key topic's partition may be led by the broker that stopped answering while the event
// topic's is not; counted as confirmed, such deletes kept /readyz at 200 while no write succeeded.)
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NotFoundError, UnavailableError } from '../../src/errors.js';
import { isSealedReport } from '../../projections/reports.js';
import type { DeletionRecords } from '../../src/keys/deletion-records.js';
import { parseKeyId, type KeyStore } from '../../src/keys/key-store.js';
import { rejection } from '../helpers/async.js';
import { startFileLogService, type FileLogService } from '../helpers/file-log-service.js';

const test = suite<{ running: FileLogService; refusing: boolean }>(
  'ReportService: a delete whose key is not destroyed in time',
);

test.before.each(async (context) => {
  // The key store takes puts (they travel with the log's group commit) but confirms no destruction
  // while `refusing`.
  context.refusing = true;
  const refusal = () => Promise.reject(new UnavailableError('the key store did not answer'));
  context.running = await startFileLogService('reports-unconfirmed-erasure-', {
    keysBefore: (keys) => {
      const records = keys as KeyStore & DeletionRecords;
      return Object.assign(Object.create(keys) as KeyStore, {
        destroy: (...args: Parameters<KeyStore['destroy']>) => (context.refusing ? refusal() : keys.destroy(...args)),
        recordDeletions: (...args: Parameters<DeletionRecords['recordDeletions']>) =>
          context.refusing ? refusal() : records.recordDeletions(...args),
      });
    },
  });
});

test.after.each(async ({ running }) => {
  await running.close();
});

test('is answered 503 and turns readiness, though its event was written', async ({ running: context }) => {
  await context.service.create({ id: '1', name: 'Performance review' });
  assert.is(context.service.writesFailing(), false, 'the create was confirmed');
  context.clock.nowMs = 10;
  const answer = await rejection(context.service.delete('1'));
  assert.instance(answer, UnavailableError);
  assert.match((answer as Error).message, /destruction of its content key is not confirmed/);
  assert.is(context.projector.model.reports.has('1'), false, 'the delete event was written and folded');
  assert.is(context.service.writesFailing(), true, 'a write that began after the last confirmed one was answered 503');
});

test('a retry of the delete, keyed or not, is answered 503 until the erasure is confirmed, and never 204 before', async (context) => {
  const { running } = context;
  await running.service.create({ id: '1', name: 'Performance review' });
  const content = running.projector.model.reports.get('1');
  assert.ok(content !== undefined && isSealedReport(content));
  const keyId = parseKeyId(content.sealed.key);
  assert.instance(await rejection(running.service.delete('1', 'delete-1')), UnavailableError);
  // The delete took effect (the fold queued its erasure, tried again in the background every second).
  for (const retry of [() => running.service.delete('1', 'delete-1'), () => running.service.delete('1')]) {
    const answer = await rejection(retry());
    assert.instance(answer, UnavailableError, 'a retry answered while the key still opens the content');
    assert.match((answer as Error).message, /destruction of its content key is not confirmed/);
  }
  assert.ok(await running.keys.get(keyId), 'the key is still there while the store refuses');
  context.refusing = false;
  await running.service.delete('1', 'delete-1');
  assert.is(await running.keys.get(keyId), undefined, 'the 204 came before the key was destroyed');
  assert.instance(await rejection(running.service.delete('1')), NotFoundError);
});

test.run();
