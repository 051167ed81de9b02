// Where `reports migrate` writes: the target log and its key store, a batch at a time, in the order
// that leaves a usable target wherever the copy stops. The keys a batch's creates name are durable
// before the batch is appended (on a log that carries keys, keys.db's, in the same group commit),
// so no event of the target ever names a key its store never held; a stop in between leaves keys
// no event names (keys.db's are swept at the server's next start; the key topic's seal nothing
// the target holds). A key whose content is not kept is never written to the key topic; keys.db,
// which must have held every id its log names, writes its slot destroyed at once (a deleted
// report's as the record of that deletion, as `reports seal-history` does), so its secret never
// reaches the disk. Once appended, the batch is folded into the target's reports: a delete that
// ends a report copied by an earlier run (the source changed since) destroys that report's key
// (keys.db: records the deletion), as a server would.
import { evolution, apply, isSealedReport } from '../../projections/reports.js';
import type { ReportEvent } from '../../projections/events.js';
import { recordsDeletions, type Deletion } from '../keys/deletion-records.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import type { EventLog, LogMessage } from '../log/event-log.js';
import type { HeldKeys } from '../keys/key-upkeep.js';
import { parseKeyId, type ContentKey, type KeyId, type KeyLookup, type KeyStore } from '../keys/key-store.js';
import type { ReportTable } from '../read-model/report-table.js';

/** What becomes of a copied create's new key. */
export type KeyFate =
  /** The content is kept: the key is put. */
  | { readonly kind: 'kept' }
  /** The report is deleted later in the history: the delete takes it to `version`. */
  | { readonly kind: 'deleted'; readonly version: number }
  /** A void create's, or a live report's whose content could not be had. */
  | { readonly kind: 'dropped' };

/** One event to copy: its message, the event it encodes, and for a create its new key and what becomes of it. */
export interface CopiedEvent {
  readonly message: LogMessage;
  readonly event: ReportEvent;
  readonly key?: { readonly key: ContentKey; readonly fate: KeyFate };
}

export interface MigrationTarget {
  readonly log: EventLog;
  readonly keys: KeyStore;
}

/** keys.db: it checks that it held the newest key its log names, and cuts a last batch naming a key never put. */
const usesEveryId = (keys: KeyStore): keys is KeyStore & HeldKeys =>
  typeof (keys as Partial<HeldKeys>).holds === 'function';

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
    const kept: ContentKey[] = [];
    const deletions: Deletion[] = [];
    const dropped: KeyId[] = [];
    for (const { event, key } of batch) {
      if (key?.fate.kind === 'kept') kept.push(key.key);
      else if (key?.fate.kind === 'deleted')
        deletions.push({ reportId: event.data.id, version: key.fate.version, key: key.key.id });
      else if (key !== undefined) dropped.push(key.key.id);
    }
    if (!carried) await keys.put(kept);
    if (usesEveryId(keys)) await this.erase(deletions, dropped);
    await log.append(
      batch.map(({ message, key }) =>
        carried && key?.fate.kind === 'kept' ? { ...message, contentKey: key.key } : message,
      ),
    );
    this.copied += batch.length;
    const ended = this.fold(batch).filter(({ key }) => key !== undefined && this.heldAtStart.get(key) !== undefined);
    await this.erase(ended, []);
  }

  /** Destroys keys: those of `deletions` with the record of the deletion where the store keeps one. */
  private async erase(deletions: readonly Deletion[], dropped: readonly KeyId[]): Promise<void> {
    const { keys } = this.target;
    const records = recordsDeletions(keys);
    const destroyed = [
      ...dropped,
      ...(records ? [] : deletions.flatMap(({ key }) => (key === undefined ? [] : [key]))),
    ];
    await Promise.all([
      records && deletions.length > 0 ? keys.recordDeletions(deletions) : undefined,
      destroyed.length > 0 ? keys.destroy(destroyed) : undefined,
    ]);
  }

  /** Folds the appended events into the target's reports; the deletions of sealed content their deletes make. */
  private fold(batch: readonly CopiedEvent[]): Deletion[] {
    const ended: Deletion[] = [];
    for (const { event } of batch) {
      const change = evolution(this.reports, event);
      const report = change.kind === 'deleted' ? this.reports.get(change.id) : undefined;
      if (report !== undefined && isSealedReport(report))
        ended.push({
          reportId: change.id,
          version: this.reports.version(change.id) + 1,
          key: parseKeyId(report.sealed.key),
        });
      apply(this.reports, change);
    }
    return ended;
  }
}
