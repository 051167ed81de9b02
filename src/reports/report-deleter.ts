// The delete command (DELETE): decide on the projected state -> append -> wait until the local
// projection has applied it -> erase the content's key -> answer, decided again after each void
// write. What a caller gets is documented on ReportService.delete (service.ts).
import type { SpanContext } from '@opentelemetry/api';
import type { AuthContext } from '../../projections/events.js';
import { deletionOf } from '../keys/deletion-records.js';
import { deleteAnswer, notFound, preconditionFailed } from './answers.js';
import { bareView, decideDelete, decideKey, type Preconditions } from './decide.js';
import { reportDeleted } from './envelope.js';
import { queueKeys } from './keyed-queue.js';
import type { WriteSteps } from './write-steps.js';

export type DeleteReport = (
  id: string,
  idempotencyKey: string | undefined,
  traceContext: SpanContext | undefined,
  preconditions: Preconditions,
  auth: AuthContext | undefined,
) => Promise<void>;

export function createReportDeleter(steps: WriteSteps): DeleteReport {
  return (id, idempotencyKey, traceContext, preconditions, auth) => {
    const deadline = steps.clockMs() + steps.options.writeTimeoutMs;
    return steps.tracked((ticket) =>
      steps.queue.run(queueKeys(id, idempotencyKey), async () => {
        const state = steps.readyState(deadline);
        // An erasure of its deletion still unconfirmed is written first (request-erasures.ts).
        const waiting = steps.erasures.waitingOf(id, steps.remaining(deadline));
        if (waiting !== undefined) await waiting;
        for (let decisions = 1; ; decisions += 1) {
          const keyed = decideKey(steps.options.projector.model.keys, idempotencyKey, { op: 'delete', id });
          if (keyed.kind !== 'new') {
            await steps.erasedBeforeNoWrite(id, ticket, deadline);
            return deleteAnswer(id, keyed);
          }
          let decision = decideDelete(bareView(state, id), preconditions);
          // A 404 or 412 must not come from state older than the request (nor does it after a void write).
          if (decisions === 1 && decision.kind !== 'append' && (await steps.caughtUpWith(id, deadline)))
            decision = decideDelete(bareView(state, id), preconditions);
          if (decision.kind === 'not-found') {
            await steps.erasedBeforeNoWrite(id, ticket, deadline);
            throw notFound(id);
          }
          if (decision.kind === 'precondition-failed') throw preconditionFailed(id, decision.failed);
          steps.beforeWriteAgain(id, decisions, deadline);
          // The key of the incarnation this delete ends (none for content written in the clear).
          const live = state.get(id);
          const data = idempotencyKey === undefined ? { id } : { id, idempotencyKey };
          const outcome = await steps.write(
            reportDeleted(steps.options, data, decision.expectedVersion, auth),
            deadline,
            traceContext,
          );
          // Void: the log and the fold took it (for readiness it counts unless the request ends in a 503); decided again.
          if (outcome === 'void') {
            steps.outcomes.voided(ticket);
            continue;
          }
          // Deleted: its content is erased, and the deletion recorded, before the answer says so.
          if (outcome === 'deleted') await steps.erase(deletionOf(id, decision.expectedVersion, live), id, deadline);
          // Confirmed once erased: a delete answered 503 for its key counts against readiness.
          steps.outcomes.confirmed(ticket);
          if (idempotencyKey !== undefined)
            return deleteAnswer(
              id,
              decideKey(steps.options.projector.model.keys, idempotencyKey, { op: 'delete', id }),
            );
          return;
        }
      }),
    );
  };
}
