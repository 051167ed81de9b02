// A create whose append the log could not confirm either way (Kafka answered without its
// partition's offset) is decided by the read model before the deadline: taken effect, it is answered
// as any create; not found, it is a 503 whose retry is safe.
import { setTimeout } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UnavailableError } from '../../src/errors.js';
import type { KeyedHeads } from '../../src/log/capabilities.js';
import { AppendOutcomeUnknownError, type EventLog, type LogMessage } from '../../src/log/event-log.js';
import { rejection } from '../helpers/async.js';
import { startFileLogService, type FileLogService } from '../helpers/file-log-service.js';

/** The file log as a log of keyed heads whose appends end with no answer, after writing (or not). */
function unanswered(writes: boolean) {
  return (log: EventLog): EventLog => {
    const keyedHeads: KeyedHeads = { latest: () => log.head(), partitionFor: () => 0 };
    const append = async (messages: readonly LogMessage[]) => {
      if (writes) await log.append(messages);
      throw new AppendOutcomeUnknownError('Kafka answered without an offset for partition 0');
    };
    return Object.assign(Object.create(log) as EventLog, keyedHeads, { append });
  };
}

const unknown = suite<{ running?: FileLogService }>('ReportService: a create the log did not confirm');

unknown.after.each(async ({ running }) => {
  await running?.close();
});

unknown('that was written is answered as created, from the read model', async (context) => {
  context.running = await startFileLogService('reports-unknown-', { logBefore: unanswered(true) });
  const { service, projector } = context.running;
  assert.equal(await service.create({ id: '7', name: 'landed', tag: 't' }), { name: 'landed', tag: 't' });
  assert.is(projector.model.reports.has('7'), true);
});

/**
 * Asserts that `write` is not answered while the service's clock stands 1 ms before the deadline
 * (for a while: it goes on looking), and is then a 503 whose retry is safe.
 */
async function assertUnavailableAtDeadline(running: FileLogService, write: Promise<unknown>): Promise<void> {
  const { clock } = running;
  let answered = false;
  const answer = rejection(write).finally(() => {
    answered = true;
  });
  clock.nowMs = 199;
  await setTimeout(300);
  assert.not.ok(answered, 'answered before its deadline');
  clock.nowMs = 200;
  const error = await answer;
  assert.instance(error, UnavailableError);
  assert.match(String(error), /did not confirm the write; retrying the same request is safe/);
}

unknown('that was not written is a 503 whose retry is safe, given at its deadline and not before', async (context) => {
  context.running = await startFileLogService('reports-unknown-', { logBefore: unanswered(false) });
  await assertUnavailableAtDeadline(context.running, context.running.service.create({ id: '8', name: 'lost' }));
  assert.is(context.running.projector.model.reports.has('8'), false);
});

unknown(
  'a delete that was written is a 503 given at its deadline, not before (nothing of its own shows it took effect)',
  async (context) => {
    context.running = await startFileLogService('reports-unknown-', { logBefore: unanswered(true) });
    await context.running.service.create({ id: '9', name: 'to delete' });
    await assertUnavailableAtDeadline(context.running, context.running.service.delete('9'));
    assert.is(context.running.projector.model.reports.has('9'), false, 'the delete took effect');
  },
);

unknown.run();
