// What the projector's catch-up at start says in the log: how far it is, every few seconds while it
// is long (a big log, no snapshot), and how long it took once the model has caught up. It owns the
// clock of the catch-up, so rates and durations count from the same start.
import type { Logger } from 'pino';
import { cursorLag, cursorTotal, type Cursor } from '../log/event-log.js';

/** How often a long catch-up logs its progress. */
const CATCH_UP_REPORT_MS = 2000;

export class CatchUpProgress {
  private startedAtMs = 0;
  private lastCatchUpReportMs = 0;

  /** `recordsAtStart`: the model's count before the projector applied anything (a snapshot's records). */
  constructor(
    private readonly logger: Logger,
    private readonly recordsAtStart: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The catch-up starts: rates, durations and the first report count from now. */
  started(): void {
    this.startedAtMs = this.now();
    this.lastCatchUpReportMs = this.startedAtMs;
  }

  /** A long catch-up (a big log, no snapshot) says how far it is every few seconds. */
  /** `records`: the model's count by now (a sharded fold moves the cursor only when it is done). */
  logProgress(cursor: Cursor, target: Cursor, records: number): void {
    const now = this.now();
    if (now - this.lastCatchUpReportMs < CATCH_UP_REPORT_MS) return;
    this.lastCatchUpReportMs = now;
    const total = cursorTotal(target);
    // Kafka offsets include records that hold nothing (transaction markers): the cursor says more, when it moved.
    const done = Math.max(total - cursorLag(cursor, target), Math.min(total, records));
    const rate = Math.round((records - this.recordsAtStart) / Math.max(0.001, (now - this.startedAtMs) / 1000));
    this.logger.info(
      { done, total, eventsPerSecond: rate, etaSeconds: Math.round((total - done) / Math.max(1, rate)) },
      'catching up with the event log',
    );
  }

  /** `applied`: records applied by the projector; `reports`: the reports the model holds. */
  logCaughtUp(applied: number, reports: number): void {
    const seconds = (this.now() - this.startedAtMs) / 1000;
    this.logger.info({ applied, reports, seconds }, 'read model caught up with the event log');
  }
}
