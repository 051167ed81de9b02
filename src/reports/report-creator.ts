// The create command (POST): decide on the projected state -> seal the content under a new key ->
// append -> wait until the local projection has applied it -> answer, decided again after each
// void write. What a caller gets is documented on ReportService.create (service.ts).
import type { SpanContext } from '@opentelemetry/api';
import type { AuthContext, ReportEvent } from '../../projections/events.js';
import type { ReportsView, StoredReport } from '../../projections/reports.js';
import { keyIdText, type ContentKey } from '../keys/key-store.js';
import type { Outcome } from '../projector/projector.js';
import { conflict, createdThenDeleted, existsUnread, keyMismatch, preconditionFailed, unconfirmed } from './answers.js';
import {
  answerReplayedCreate,
  bareView,
  decideCreate,
  decideKey,
  sameReport,
  storedReport,
  type CreateCommand,
  type KeyDecision,
  type Preconditions,
  type ReportView,
} from './decide.js';
import { queueKeys } from './keyed-queue.js';
import type { ContentOpener } from './report-content.js';
import { sealedCreate, type CreateToSeal } from './sealed-create.js';
import type { WriteSteps } from './write-steps.js';

export type CreateReport = (
  command: CreateCommand,
  idempotencyKey: string | undefined,
  traceContext: SpanContext | undefined,
  preconditions: Preconditions,
  auth: AuthContext | undefined,
  readable: boolean,
) => Promise<StoredReport>;

export function createReportCreator(steps: WriteSteps, opener: ContentOpener): CreateReport {
  /** The report as a decision reads it; its content opened only when it is live (a create of an id that exists). */
  const view = (state: ReportsView, id: string): Promise<ReportView> | ReportView =>
    state.has(id) ? opener.view(state, id) : bareView(state, id);

  /** A retry of a keyed create: the first answer again, compared with the report its key points at. */
  const replayCreate = async (
    keyed: KeyDecision,
    state: ReportsView,
    command: CreateCommand,
  ): Promise<StoredReport> => {
    if (keyed.kind !== 'replay') throw keyMismatch();
    const answer = answerReplayedCreate(keyed.request, await view(state, command.id), command);
    if (answer.kind === 'unchanged') return answer.report;
    if (answer.kind === 'conflict') throw conflict(command.id);
    if (answer.kind === 'deleted-since') throw createdThenDeleted(command.id);
    throw keyMismatch();
  };

  const sealed = async (create: CreateToSeal, deadline: number): Promise<{ event: ReportEvent; key: ContentKey }> => {
    try {
      return await sealedCreate(steps.options, create, steps.remaining(deadline));
    } catch (error) {
      throw steps.answerTo(error, create.id);
    }
  };

  return (command, idempotencyKey, traceContext, preconditions, auth, readable) => {
    const deadline = steps.clockMs() + steps.options.writeTimeoutMs;
    const { id } = command;
    // A caller that may not read is never told whether its body is the report's: the decision
    // sees no content (so an existing live report conflicts), and the 409 says nothing of it.
    const decisionView = readable ? view : bareView;
    const conflicting = readable ? conflict : existsUnread;
    return steps.tracked((ticket) =>
      steps.queue.run(queueKeys(id, idempotencyKey), async () => {
        const state = steps.readyState(deadline);
        for (let decisions = 1; ; decisions += 1) {
          let keyed = decideKey(steps.options.projector.model.keys, idempotencyKey, { op: 'create', id });
          // A retry's answer writes nothing either: a 200 with the content of a report another
          // instance deleted meanwhile came from here. (The key's events are on the id's partition.)
          if (decisions === 1 && keyed.kind !== 'new' && (await steps.caughtUpWith(id, deadline)))
            keyed = decideKey(steps.options.projector.model.keys, idempotencyKey, { op: 'create', id });
          if (keyed.kind !== 'new') return replayCreate(keyed, state, command);
          let decision = decideCreate(await decisionView(state, id), command, preconditions);
          // An answer that writes nothing must not come from state older than the request. (After a
          // void write it does not: the state holds everything before that write's own event.)
          if (decisions === 1 && decision.kind !== 'append' && (await steps.caughtUpWith(id, deadline)))
            decision = decideCreate(await decisionView(state, id), command, preconditions);
          if (decision.kind === 'unchanged') return decision.report;
          if (decision.kind === 'conflict') throw conflicting(id);
          if (decision.kind === 'precondition-failed') throw preconditionFailed(id, decision.failed);
          steps.beforeWriteAgain(id, decisions, deadline);
          const { event, key } = await sealed(
            { id, report: storedReport(command), idempotencyKey, expectedVersion: decision.expectedVersion, auth },
            deadline,
          );
          // A copy of this event that took effect before the one the log answers with (see own-creates.ts).
          const own = steps.options.projector.ownCreates.watch(keyIdText(key.id));
          let outcome: Outcome;
          try {
            outcome = await steps.write(event, deadline, traceContext, key);
          } finally {
            own.end();
          }
          // Kafka's producer wrote this event twice and its first copy made the report: the request's
          // answer is that report, deleted since or not, and the request is not decided again.
          const ownCopyTookEffect = outcome === 'copy' || (outcome === 'void' && own.tookEffect());
          // Decided on a state other writes had moved on from by the time the event reached the log
          // (another instance's, not yet folded here): its key is destroyed (the event can never take
          // effect), and the request decided again on the state that now holds those writes.
          if (outcome === 'void' && !ownCopyTookEffect) {
            // The log and the fold took it: for readiness it counts unless the request ends in a 503.
            steps.outcomes.voided(ticket);
            await steps.erase([key.id], id, deadline);
            continue;
          }
          steps.outcomes.confirmed(ticket);
          if (idempotencyKey !== undefined)
            return replayCreate(
              decideKey(steps.options.projector.model.keys, idempotencyKey, { op: 'create', id }),
              state,
              command,
            );
          if (outcome === 'created' || ownCopyTookEffect) return storedReport(command);
          // The outcome is no longer remembered (rare): the state says whether the report is this one.
          const projected = (await view(state, id)).content;
          if (projected !== undefined && sameReport(projected, command)) return projected;
          throw unconfirmed(id);
        }
      }),
    );
  };
}
