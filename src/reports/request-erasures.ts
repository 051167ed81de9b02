// The erasures the service's requests wait for, and those the fold hands it (key-eraser.ts does
// the writing and the trying again): a failure to confirm one before an answer is a 503 (the
// write took effect, retrying is safe, the eraser keeps trying).
import type { Logger } from 'pino';
import { UnavailableError } from '../errors.js';
import type { Deletion, UnerasedDeletion } from '../keys/deletion-records.js';
import { keyIdText, parseKeyId, type KeyId, type KeyStore } from '../keys/key-store.js';
import type { Ended } from '../read-model/read-model.js';
import { createKeyEraser, type KeyEraser } from './key-eraser.js';

/**
 * A delete's answer waited for the start's sweep of the key store, which outlasted the request: a
 * 503 that says nothing of the log or the key store's writes (not counted against readiness).
 */
export class SweepUnfinishedError extends UnavailableError {}

/** The start's sweep: under way (`done` says whether it finished), or failed (tried again by its owner). */
type SweepState = { readonly kind: 'running'; readonly done: Promise<boolean> } | { readonly kind: 'failed' };

export class RequestErasures {
  private readonly eraser: KeyEraser;
  /** The start's sweep of keys a crash left behind, while it runs or after it failed (`sweeping`). */
  private sweep: SweepState | undefined;

  constructor(
    keys: KeyStore,
    private readonly logger: Logger,
    /** Told of the keys destroyed, once the store confirms it (the feeds: feed-hub.ts `erased`). */
    onErased?: (ids: readonly KeyId[]) => void,
  ) {
    this.eraser = createKeyEraser(keys, logger, undefined, onErased);
  }

  /** Erases a void create's keys, or what a delete that took effect ends, before report `id`'s answer. */
  beforeAnswer(what: readonly KeyId[] | Deletion, id: string, timeoutMs: number): Promise<void> {
    return this.confirmed(id, this.eraser.erase(what, timeoutMs));
  }

  /**
   * An erasure of report `id`'s deletion still being tried again (its delete answered 503, or the
   * fold queued it), written before any answer about the report: a retry of that delete must not
   * get its 204 (or a 404) while the key may still open the content. Undefined when none waits.
   */
  waitingOf(id: string, timeoutMs: number): Promise<void> | undefined {
    return this.eraser.waitsFor(id) ? this.confirmed(id, this.eraser.settle(id, timeoutMs)) : undefined;
  }

  /**
   * The start's sweep of keys no live report uses (key-upkeep.ts), under way: among them may be the
   * key of a report whose delete reached the log before a crash, and did not destroy it.
   */
  sweeping(sweep: Promise<unknown>): void {
    const running: SweepState = {
      kind: 'running',
      done: sweep.then(
        () => true,
        () => false,
      ),
    };
    this.sweep = running;
    void running.done.then((finished) => {
      // A sweep that failed holds these deletes until its owner tries again and says so here.
      if (this.sweep === running) this.sweep = finished ? undefined : { kind: 'failed' };
    });
  }

  /**
   * Before a delete's answer that writes nothing (a 404, the remembered answer of a keyed retry):
   * the start's sweep is done, within `timeoutMs`, or a 503. A delete that reached the log just
   * before a crash is answered so on its retry, and its key may be among those the sweep destroys.
   */
  async swept(id: string, timeoutMs: number): Promise<void> {
    const sweep = this.sweep;
    if (sweep === undefined) return;
    let finished = false;
    if (sweep.kind === 'running') {
      let timer: NodeJS.Timeout | undefined;
      finished = await Promise.race([
        sweep.done,
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
    }
    if (finished) return;
    throw new SweepUnfinishedError(
      sweep.kind === 'failed'
        ? `the server could not yet destroy the keys a crash left behind, which may include report ${id}'s (the key store failed; it is tried again); retrying the same request is safe`
        : `the server is still destroying the keys a crash left behind, which may include report ${id}'s; retrying the same request is safe`,
    );
  }

  /**
   * Before a delete's answer that writes nothing (a 404, a keyed retry's remembered answer): an
   * erasure of the report's deletion still being tried again is confirmed (the fold may have just
   * handed over a late delete that voided the request's own), then the start's sweep is done.
   * `notAWrite` is called between the two: the sweep's wait says nothing of the log.
   */
  async beforeNoWrite(id: string, remainingMs: () => number, notAWrite: () => void): Promise<void> {
    const waiting = this.waitingOf(id, remainingMs());
    if (waiting !== undefined) await waiting;
    notAWrite();
    await this.swept(id, remainingMs());
  }

  /** Destroys the keys in the background (the key topic's sweep: key-upkeep.ts). */
  laterKeys(ids: readonly KeyId[]): void {
    if (ids.length > 0) this.eraser.eraseLater(ids);
  }

  /** Erases in the background what an event another writer wrote ends (read-model.ts Ended). */
  later(ended: Ended): void {
    if (ended.kind === 'void') this.eraser.eraseLater([parseKeyId(ended.key)]);
    else
      this.eraser.eraseLater(
        ended.key === undefined
          ? { reportId: ended.reportId, version: ended.version }
          : { reportId: ended.reportId, version: ended.version, key: parseKeyId(ended.key) },
      );
  }

  /** Whether the start's sweep failed and waits to be tried again (for /metrics): deletes of absent reports answer 503 meanwhile. */
  sweepFailing(): boolean {
    return this.sweep?.kind === 'failed';
  }

  /** The deletions whose keys are not confirmed destroyed yet, as a snapshot lists them. */
  unconfirmed(): UnerasedDeletion[] {
    return this.eraser
      .unconfirmed()
      .flatMap(({ reportId, version, key }) => (key === undefined ? [] : [{ reportId, version, key: keyIdText(key) }]));
  }

  /** Keys whose destruction is still being tried again (for /metrics). */
  pending(): number {
    return this.eraser.pending();
  }

  /** Stops trying again (at shutdown: what is left is swept by the next start, start-upkeep.ts). */
  stop(): void {
    this.eraser.stop();
  }

  private async confirmed(id: string, erasure: Promise<void>): Promise<void> {
    try {
      await erasure;
    } catch (error) {
      this.logger.warn(
        { err: error, subject: id },
        'the key store did not confirm the destruction of a key; trying again in the background',
      );
      throw new UnavailableError(
        `report ${id} was written, but the destruction of its content key is not confirmed yet; retrying the same request is safe`,
      );
    }
  }
}
