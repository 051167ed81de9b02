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
import { payloadBytes, type EventLog, type LogMessage } from '../log/event-log.js';
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
  /** The key and value bytes of `batch`, which one append of the target takes at most `maxRecordBytes` of. */
  private batchBytes = 0;
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

  /** Adds an event to the batch, flushing the batch first when it would make one append too large. */
  async push(copied: CopiedEvent): Promise<void> {
    const bytes = payloadBytes(copied.message);
    if (this.batch.length > 0 && this.batchBytes + bytes > this.target.log.maxRecordBytes) await this.flush();
    this.batch.push(copied);
    this.batchBytes += bytes;
  }

  /**
   * Destroys the keys the target still holds of its own reports that its own deletes ended: a run
   * stopped between appending a batch and destroying the keys its deletes end leaves them, and the
   * next run copies none of those events again (they are in the target), so it must finish them.
   */
  async finishErasures(ended: readonly Deletion[]): Promise<void> {
    const held = ended.filter(({ key }) => key !== undefined && this.heldAtStart.get(key) !== undefined);
    if (held.length > 0) await this.erase(held, []);
  }

  async flush(): Promise<void> {
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    this.batchBytes = 0;
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
    for (const { event } of batch) foldEnding(this.reports, event, ended);
    return ended;
  }
}

/** Folds `event` into `reports`; a delete that ends a sealed report adds its deletion to `ended`. */
export function foldEnding(reports: ReportTable, event: ReportEvent, ended: Deletion[]): void {
  const change = evolution(reports, event);
  const report = change.kind === 'deleted' ? reports.get(change.id) : undefined;
  if (report !== undefined && isSealedReport(report))
    ended.push({ reportId: change.id, version: reports.version(change.id) + 1, key: parseKeyId(report.sealed.key) });
  apply(reports, change);
}
