// The creates this process has in flight, by the key their content is sealed under. Kafka's producer
// can write an event twice (a produce request whose answer was lost, sent again), and the writer
// learns the outcome at the offset the producer answered with: the second copy's, void. While the
// report is still live the fold tells such a copy apart by its key (reason `copy`); once another
// write has ended the report between the two copies, the copy is void as superseded like any stale
// write, and only its writer can know that its own first copy took effect. Deciding again there
// would make the report a second time, after a delete another client was answered 204 for.
import { isSealedReport, type Evolution } from '../../projections/reports.js';

export interface OwnCreate {
  /** Whether a create sealed under the watched key has taken effect since the watch began. */
  tookEffect(): boolean;
  /** Stops watching (the write is answered). */
  end(): void;
}

export class OwnCreates {
  private readonly watched = new Map<string, { tookEffect: boolean }>();

  /** Watches for a create sealed under `key` (base64url key id) taking effect; call before it is appended. */
  watch(key: string): OwnCreate {
    const entry = { tookEffect: false };
    this.watched.set(key, entry);
    return {
      tookEffect: () => entry.tookEffect,
      end: () => {
        if (this.watched.get(key) === entry) this.watched.delete(key);
      },
    };
  }

  /** Told what each record the projector applies did. */
  applied(change: Evolution | { readonly kind: 'invalid' }): void {
    if (this.watched.size === 0 || change.kind !== 'created' || !isSealedReport(change.report)) return;
    const entry = this.watched.get(change.report.sealed.key);
    if (entry !== undefined) entry.tookEffect = true;
  }
}
