// Whether the embedded log's writer takes writes: after a failed durable write, the failure every
// append is refused with, and the way back. A full disk resumes by itself once space is freed
// (space-watch.ts); a read-only file system is told to the server once (read-only.ts); any other
// failure lasts until a restart re-scans the file.
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { isReadOnlyError, readOnlyNow } from '../../data-dir/read-only.js';
import type { FileKeyStore } from '../../keys/file-key-store.js';
import type { KeyId } from '../../keys/key-store.js';
import { LogUnavailableError } from '../event-log.js';
import type { FrameIndex } from './frame-index.js';
import { isSpaceError, SpaceWatch } from './space-watch.js';

export interface WriteHealthOptions {
  /** The writer's index: its file is cut back to `endByte` once space is freed. */
  readonly index: FrameIndex;
  /** keys.db: resumes with the log after a full disk. */
  readonly keys: FileKeyStore;
  readonly logger: Logger;
  /** Told once when a write fails because the file system is read-only. */
  readonly onReadOnly: (() => void) | undefined;
}

export class WriteHealth {
  private currentFailure: Error | undefined;
  private closed = false;
  /** While a write failed for want of space: watches for room, then takes writes again. */
  private readonly spaceWatch: SpaceWatch;
  /**
   * The keys of the batches that failed for want of space: put for creates that were refused (503)
   * and are cut from the log on resumption. Destroyed then, before writes are taken again: each
   * holds its content's digest, which would confirm a guess of content that was never stored (or
   * was stored by a retry and deleted since) until the next start's sweep.
   */
  private orphans: KeyId[] = [];
  /** Whether the server was told the file system is read-only (once). */
  private readOnlyTold = false;
  private readonly index: FrameIndex;
  private readonly keys: FileKeyStore;
  private readonly logger: Logger;
  private readonly onReadOnly: (() => void) | undefined;

  constructor({ index, keys, logger, onReadOnly }: WriteHealthOptions) {
    this.index = index;
    this.keys = keys;
    this.logger = logger;
    this.onReadOnly = onReadOnly;
    this.spaceWatch = new SpaceWatch({ path: dirname(index.path) });
  }

  /** What every append is refused with, while writes are refused. */
  get failure(): Error | undefined {
    return this.currentFailure;
  }

  /**
   * After a failed durable write the page cache and the disk may disagree; appending on top could
   * acknowledge data that is not there. Every append fails until a restart re-scans, or, when the
   * disk was full, until space is freed and the file is cut back to what was acknowledged.
   */
  failed(cause: unknown, batchKeys: readonly KeyId[] = []): Error {
    if (isReadOnlyError(cause)) return this.readOnly(cause);
    if (!isSpaceError(cause)) {
      this.currentFailure = new LogUnavailableError(
        `the event log ${this.index.path} failed to write; restart the service`,
        { cause },
      );
      // A failing disk's EIO comes first, and the kernel remounts the file system read-only with it.
      void this.readOnlyNow(cause);
      return this.currentFailure;
    }
    // Only here is the batch known to be cut (on resumption); after another failure a restart's
    // recovery may keep it whole, and its keys are left to that start's sweep.
    this.orphans.push(...batchKeys);
    this.currentFailure = new LogUnavailableError(
      `the disk of the event log ${this.index.path} is full: writes are refused until space is freed, then resume by themselves`,
      { cause, announced: true },
    );
    this.logger.error(
      { path: this.index.path, err: cause },
      'the disk of the event log is full: writes answer 503 until space is freed',
    );
    this.spaceWatch.start(() => this.resumeAfterFullDisk());
    return this.currentFailure;
  }

  /**
   * The log's name no longer leads to the file written (place-watch.ts): every write is refused
   * until a restart on the directory where the store now is.
   */
  lost(what: string): void {
    if (this.closed) return;
    this.spaceWatch.stop();
    this.currentFailure = new LogUnavailableError(
      `${what}: the data directory was moved or deleted under the server (or the log replaced), so writes are refused; restart the service where the store now is`,
      { announced: true },
    );
    this.logger.error(
      { path: this.index.path, reason: what },
      'the event log is no longer where the server opened it: writes answer 503 until a restart',
    );
  }

  /** The writer is closing: no more watching for space, nor telling of a read-only file system. */
  close(): void {
    this.closed = true;
    this.spaceWatch.stop();
  }

  /** Every write refused until the file system is writable again; the server is told once, and lets go of the directory. */
  private readOnly(cause: unknown): Error {
    const told = this.readOnlyTold;
    this.readOnlyTold = true;
    this.currentFailure = new LogUnavailableError(
      `the file system of the event log ${this.index.path} is read-only: writes are refused until it is writable again`,
      { cause, announced: true },
    );
    if (!told) {
      this.spaceWatch.stop();
      this.logger.error(
        { path: this.index.path, err: cause },
        'the data directory is read-only: writes answer 503 until it is writable again',
      );
      this.onReadOnly?.();
    }
    return this.currentFailure;
  }

  /** After another failure: the read-only path too, if the directory now refuses a new file as read-only. */
  private async readOnlyNow(cause: unknown): Promise<boolean> {
    if (this.closed || this.readOnlyTold || !(await readOnlyNow(dirname(this.index.path)))) return false;
    this.readOnly(cause);
    return true;
  }

  private async resumeAfterFullDisk(): Promise<boolean> {
    if (this.closed) return true;
    if (await this.readOnlyNow(this.currentFailure)) return true;
    if (!(await this.keys.resumeAfterFullDisk())) return false;
    // The failed batch's bytes (in the page cache, or some on disk) lie past the acknowledged end.
    await this.index.file.truncate(this.index.endByte);
    await this.index.file.datasync();
    // Their batches are gone from the log for good now: their keys go too (if this fails, the next poll tries again).
    if (this.orphans.length > 0) {
      const orphans = [...this.orphans];
      await this.keys.destroy(orphans);
      this.orphans = this.orphans.slice(orphans.length);
      this.logger.info({ keys: orphans.length }, 'destroyed the keys of the creates refused while the disk was full');
    }
    this.currentFailure = undefined;
    this.logger.info({ path: this.index.path }, 'the event log takes writes again: space was freed');
    return true;
  }
}
