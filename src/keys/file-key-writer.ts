// keys.db's group commits (file-key-store.ts): puts and destroys that wait together are planned
// together (slot-plan.ts) and written durably with one sync (slot-writes.ts), and each resolves
// only once it is durable. A failed write refuses every later one: for want of space until space
// is freed (space-watch.ts), after any other failure until a restart checks the file again.
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { Batcher } from '../log/batcher.js';
import { isSpaceError, SpaceWatch } from '../log/file/space-watch.js';
import { slotPosition } from './key-slots.js';
import { KeyStoreUnavailableError } from './key-store-errors.js';
import { planSlotWrites, type KeyWrite } from './slot-plan.js';
import { writeRunsDurably, type SlotFile } from './slot-writes.js';

/** What the group commits made durable since open (FileKeyStoreStats, but for unreadable). */
export interface KeyWriteCounts {
  readonly puts: number;
  readonly syncs: number;
  readonly erasures: number;
  readonly deletions: number;
}

export class FileKeyWriter {
  private readonly batcher: Batcher<KeyWrite, undefined>;
  /** Slots durable in the file. */
  private durableSlots: number;
  /** The group commit being written, while it is. */
  private writing: Promise<void> | undefined;
  private refusedWith: Error | undefined;
  private stopped = false;
  private readonly counted = { puts: 0, syncs: 0, erasures: 0, deletions: 0 };
  /** While a write failed for want of space: watches for room, then takes writes again. */
  private readonly spaceWatch: SpaceWatch;

  constructor(
    private readonly path: string,
    /** The file's descriptors for the group commits' writes. */
    private readonly slotFile: SlotFile,
    /** Slots in the file at open. */
    slots: number,
    private readonly logger: Logger,
    maxPending: number,
    /** Told the writes of each group commit once they are durable, before any of them resolves. */
    private readonly onDurable: (writes: readonly KeyWrite[]) => void,
  ) {
    this.durableSlots = slots;
    this.batcher = new Batcher((writes) => this.writeGroup(writes), { maxPending });
    this.spaceWatch = new SpaceWatch({ path: dirname(path) });
  }

  /** Slots durable in the file. */
  get written(): number {
    return this.durableSlots;
  }

  /** The failure every write is refused with, while there is one. */
  get failure(): Error | undefined {
    return this.refusedWith;
  }

  /** Whether `close` was called: no write is taken any more. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Whether a group commit is being written. */
  get writeInFlight(): boolean {
    return this.writing !== undefined;
  }

  get counts(): KeyWriteCounts {
    return this.counted;
  }

  /** Queues `write` for the next group commit; resolves once it is durable. */
  add(write: KeyWrite, timeoutMs: number | undefined): Promise<undefined> {
    return this.batcher.add(write, undefined, timeoutMs);
  }

  private async writeGroup(writes: readonly KeyWrite[]): Promise<undefined[]> {
    if (this.refusedWith) throw this.refusedWith;
    const plan = planSlotWrites(writes, this.durableSlots);
    if (plan.runs.length > 0) {
      this.writing = writeRunsDurably(this.slotFile, plan.runs);
      try {
        await this.writing;
      } catch (cause) {
        throw this.refuseWrites(cause);
      } finally {
        this.writing = undefined;
      }
      this.counted.syncs += 1;
    }
    this.durableSlots = plan.end;
    this.onDurable(writes);
    this.counted.puts += plan.puts;
    this.counted.erasures += plan.destroyed;
    this.counted.deletions += plan.recorded;
    return writes.map(() => undefined);
  }

  /** The failure every write is refused with from now on, after a write failed with `cause`. */
  private refuseWrites(cause: unknown): Error {
    // After a failed write the page cache and the disk may disagree, and a later sync could
    // acknowledge what is not there: fail every write until a restart checks the file again.
    if (isSpaceError(cause)) {
      this.refusedWith = new KeyStoreUnavailableError(
        `the disk of the key store ${this.path} is full: writes are refused until space is freed, then resume by themselves`,
        { cause },
      );
      this.logger.error(
        { path: this.path, err: cause },
        'the disk of the key store is full: writes answer 503 until space is freed',
      );
      this.spaceWatch.start(() => this.resumeAfterFullDisk());
    } else {
      this.refusedWith = new KeyStoreUnavailableError(
        `the key store ${this.path} failed to write; restart the service`,
        { cause },
      );
    }
    return this.refusedWith;
  }

  /** Resolves once the group commit being written (if any) is durable or failed. */
  async settled(): Promise<void> {
    await this.writing?.catch(() => undefined);
  }

  /** FileKeyStore.resumeAfterFullDisk. */
  async resumeAfterFullDisk(): Promise<boolean> {
    if (this.stopped || this.refusedWith === undefined) return true;
    if (!isSpaceError(this.refusedWith)) return false;
    // What the failed group wrote past the durable slots (the page cache may hold it): cut off.
    // Slots minted for its puts stay taken; a later group fills the gap with reserved slots.
    const { handle } = this.slotFile.durable;
    await handle.truncate(slotPosition(this.durableSlots));
    await handle.datasync();
    this.refusedWith = undefined;
    this.spaceWatch.stop(false);
    this.logger.info({ path: this.path }, 'the key store takes writes again: space was freed');
    return true;
  }

  /** Takes no more writes; resolves once those accepted are durable and the write descriptors closed. */
  async close(): Promise<void> {
    this.stopped = true;
    this.spaceWatch.stop();
    // Writes already accepted are written and synced before the file is closed.
    await this.batcher.idle();
    await this.slotFile.durable.handle.close();
  }
}
