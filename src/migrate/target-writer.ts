// Where `reports migrate` writes: the target log and its key store, a batch at a time, in the order
// that leaves a usable target wherever the copy stops. The keys a batch's creates name are durable
// before the batch is appended (on a log that carries keys, keys.db's, in the same group commit),
// so no event of the target ever names a key its store never held; a stop in between leaves keys
// no event names (keys.db's are swept at the server's next start; the key topic's seal nothing
// the target holds). A key destroyed at once is written and destroyed only where the store must
// have held every id its log names (keys.db), and never written to the key topic. Once appended,
// the batch is folded into the target's reports: a delete that ends a report copied by an earlier
// run (the source changed since) destroys that report's key, as a server would.
import { evolution, apply, isSealedReport } from '../../projections/reports.js';
import type { ReportEvent } from '../../projections/events.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import type { EventLog, LogMessage } from '../log/event-log.js';
import type { HeldKeys } from '../keys/key-upkeep.js';
import { parseKeyId, type ContentKey, type KeyId, type KeyLookup, type KeyStore } from '../keys/key-store.js';
import type { ReportTable } from '../read-model/report-table.js';

/** One event to copy: its message, the event it encodes, and for a create its new key. */
export interface CopiedEvent {
  readonly message: LogMessage;
  readonly event: ReportEvent;
  readonly key?: ContentKey;
  /** Whether the target keeps `key`; otherwise it is destroyed at once. */
  readonly live?: boolean;
}

export interface MigrationTarget {
  readonly log: EventLog;
  readonly keys: KeyStore;
}

/** keys.db: it checks that it held the newest key its log names, and cuts a last batch naming a key never put. */
const usesEveryId = (keys: KeyStore): keys is KeyStore & HeldKeys => typeof (keys as Partial<HeldKeys>).holds === 'function';

export class TargetWriter {
  private batch: CopiedEvent[] = [];
  copied = 0;

  constructor(
    private readonly target: MigrationTarget,
    /** The target's reports, folded from its events so far. */
    private readonly reports: ReportTable,
    /** The keys the target's store held when the copy started. */
    private readonly heldAtStart: KeyLookup,
  ) {}

  get pending(): number {
    return this.batch.length;
  }

  push(copied: CopiedEvent): void {
    this.batch.push(copied);
  }

  async flush(): Promise<void> {
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    const { log, keys } = this.target;
    const carried = hasKeyCarrier(log);
    const live = batch.flatMap(({ key, live }) => (key !== undefined && live === true ? [key] : []));
    const dead = batch.flatMap(({ key, live }) => (key !== undefined && live !== true ? [key] : []));
    if (!carried) await keys.put(live);
    if (usesEveryId(keys) && dead.length > 0) {
      await keys.put(dead);
      await keys.destroy(dead.map(({ id }) => id));
    }
    await log.append(batch.map(({ message, key, live }) => (carried && live === true && key !== undefined ? { ...message, contentKey: key } : message)));
    this.copied += batch.length;
    const ended = this.fold(batch).filter((id) => this.heldAtStart.get(id) !== undefined);
    if (ended.length > 0) await keys.destroy(ended);
  }

  /** Folds the appended events into the target's reports; the keys of the content their deletes end. */
  private fold(batch: readonly CopiedEvent[]): KeyId[] {
    const ended: KeyId[] = [];
    for (const { event } of batch) {
      const change = evolution(this.reports, event);
      const report = change.kind === 'deleted' ? this.reports.get(change.id) : undefined;
      if (report !== undefined && isSealedReport(report)) ended.push(parseKeyId(report.sealed.key));
      apply(this.reports, change);
    }
    return ended;
  }
}
