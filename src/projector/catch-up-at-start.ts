// The projector's catch-up at start: the head it catches up with (read again until the log
// answers) and, when the way there is long, the fold that brings it in (foldLog, on several threads
// when it can). The follow loop takes over from wherever the fold got to.
import { cursorLag, type Cursor, type LogPosition } from '../log/event-log.js';
import { pause } from '../pause.js';
import type { ReadModel } from '../read-model/read-model.js';
import type { CatchUpProgress } from './catch-up-progress.js';
import { foldLog, SHARDED_FOLD_RECORDS } from './fold-log.js';
import type { ProjectionHealth } from './health.js';
import type { ProjectorOptions } from './projector-options.js';

/** The projector's options a catch-up at start uses (projector-options.ts says what each means). */
export type CatchUpOptions = Pick<
  ProjectorOptions,
  'log' | 'logger' | 'foldThreads' | 'onApplied' | 'onEndedInCatchUp'
>;

/** The parts of the projector a catch-up on threads folds into or tells. */
export interface CatchUpContext {
  readonly model: ReadModel;
  readonly signal: AbortSignal;
  readonly health: ProjectionHealth;
  readonly progress: CatchUpProgress;
  readonly onSkipped: (position: LogPosition, reason: string) => void;
}

/** The head seen at start, read again after every failure until the log answers (empty once stopped). */
export async function headWithRetry(
  options: Pick<ProjectorOptions, 'log' | 'logger'>,
  signal: AbortSignal,
  retryDelayMs: number,
): Promise<Cursor> {
  while (!signal.aborted) {
    try {
      return await options.log.head();
    } catch (error) {
      options.logger.error({ err: error }, 'cannot read the head of the event log; retrying');
      await pause(retryDelayMs, signal);
    }
  }
  return new Map();
}

/**
 * A long catch-up at start, by foldLog (on several threads when it can), until `target`. Its
 * records settle no waiter: writes are refused until the model has caught up, so none of them
 * was written by a request of this process.
 */
export async function catchUpOnThreads(
  target: Cursor,
  options: CatchUpOptions,
  context: CatchUpContext,
): Promise<void> {
  const { model, signal } = context;
  const threads = options.foldThreads;
  if (threads === undefined || cursorLag(model.cursor, target) < SHARDED_FOLD_RECORDS) return;
  let reported = model.counts.records;
  try {
    await foldLog(options.log, model, {
      to: target,
      signal,
      threads,
      ...(options.onEndedInCatchUp ? { onEnded: options.onEndedInCatchUp } : {}),
      onSkipped: context.onSkipped,
      onProgress: ({ records, lastTimestampMs }) => {
        context.health.applied(lastTimestampMs);
        options.onApplied?.(records - reported);
        reported = records;
        context.progress.logProgress(model.cursor, target, records);
      },
      onThreadsFailed: (error) =>
        options.logger.warn(
          { err: error, threads },
          'the catch-up could not fold on threads; folding on this one (slower)',
        ),
    });
  } catch (error) {
    // The follow loop goes on from wherever this got to.
    if (!signal.aborted)
      options.logger.error({ err: error }, 'the catch-up at start failed; following the log instead');
  }
}
