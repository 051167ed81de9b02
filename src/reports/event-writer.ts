// The write itself: the event appended (encoded through the projector's table), then the wait
// until the local projection has applied it, with a span around each. An append whose outcome the
// log could not confirm either way is looked for in the read model before it is answered 503
// (unknown-outcome.ts).
import type { SpanContext } from '@opentelemetry/api';
import type { ReportEvent } from '../../projections/events.js';
import type { ContentKey } from '../keys/key-store.js';
import { AppendOutcomeUnknownError, LogOverloadedError, type EventLog, type LogPosition } from '../log/event-log.js';
import type { Outcome, Projector } from '../projector/projector.js';
import { parentContext, type WriteTracing } from './tracing.js';
import { tookEffect } from './unknown-outcome.js';

/** Appends `event` by `deadline` and answers what the fold made of it; `contentKey` when its content is sealed. */
export type WriteEvent = (
  event: ReportEvent,
  deadline: number,
  traceContext: SpanContext | undefined,
  contentKey?: ContentKey,
) => Promise<Outcome>;

export interface EventWriterDeps {
  readonly log: EventLog;
  readonly projector: Projector;
  readonly tracing: WriteTracing;
  readonly clockMs: () => number;
  /** Milliseconds left before `deadline`, at least 1. */
  readonly remaining: (deadline: number) => number;
  /** Called with the duration of every successful append (metrics). */
  readonly onAppend?: (durationMs: number) => void;
  /** What a failure of the log or of the projection becomes for the client (503). */
  readonly answerTo: (error: unknown, subject: string) => unknown;
  /** Hears of a sealed create's key whose event the log refused before taking it (it is written nowhere). */
  readonly onNeverAppended?: (contentKey: ContentKey) => void;
}

export function createEventWriter({
  log,
  projector,
  tracing,
  clockMs,
  remaining,
  onAppend,
  answerTo,
  onNeverAppended,
}: EventWriterDeps): WriteEvent {
  return async (event, deadline, traceContext, contentKey) => {
    const started = clockMs();
    const parent = parentContext(traceContext);
    try {
      const append = (traced: ReportEvent) => {
        // Encoded through the projector's table: when the log hands these bytes back, it folds the event unparsed.
        // The log settles the append by the deadline itself (one shared timer, no per-request signal).
        const value = projector.encoded.encode(traced);
        const message =
          contentKey === undefined ? { key: traced.subject, value } : { key: traced.subject, value, contentKey };
        return log.append([message], { timeoutMs: remaining(deadline) });
      };
      const [position] = await tracing.append(parent, event, append);
      onAppend?.(clockMs() - started);
      return await tracing.wait(parent, () => projector.waitFor(position as LogPosition, remaining(deadline)));
    } catch (error) {
      // Refused at the door (too many appends waiting): nothing of it was sent or written.
      if (error instanceof LogOverloadedError && contentKey !== undefined) onNeverAppended?.(contentKey);
      if (error instanceof AppendOutcomeUnknownError) {
        const found = await tookEffect(event, {
          log,
          projector,
          remainingMs: () => deadline - clockMs(),
        });
        if (found) return 'created';
      }
      throw answerTo(error, event.subject);
    }
  };
}
