// A delete whose event is written but whose content key the store does not destroy in time is
// answered 503, and counts against readiness as any 503: the write did not do what it says. (On
// Kafka the key topic's partition may be led by the broker that stopped answering while the event
// topic's is not; counted as confirmed, such deletes kept /readyz at 200 while no write succeeded.)
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UnavailableError } from '../../src/errors.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { rejection } from '../helpers/async.js';
import { startFileLogService, type FileLogService } from '../helpers/file-log-service.js';

const test = suite<{ running: FileLogService }>('ReportService: a delete whose key is not destroyed in time');

test.before.each(async (context) => {
  // The key store takes puts (they travel with the log's group commit) but confirms no destruction.
  const refuse = () => Promise.reject(new UnavailableError('the key store did not answer'));
  context.running = await startFileLogService('reports-unconfirmed-erasure-', {
    keysBefore: (keys) => Object.assign(Object.create(keys) as KeyStore, { destroy: refuse, recordDeletions: refuse }),
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

test.run();
