// The embedded key store: keys.db in the data directory, beside the embedded log (key-slots.ts has
// the format). A key's id is its slot number, and slots are never reused: an id names one key for
// the life of the file, so a destroyed key's id can never come back holding another key (an event
// that names it must never open again, and a key must never seal two contents under its fixed
// nonce). Group commit as the log's: puts and destroys that wait together are written together and
// share one sync, and each resolves only once it is durable. Nothing logged carries a secret or a
// content digest: lines name the file and slot numbers only.
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { createSecretSource } from './secret-source.js';
import { Batcher, DEFAULT_MAX_PENDING_APPENDS } from '../log/batcher.js';
import { STAGING_DIR } from '../data-dir/data-dir.js';
import { openDurable } from '../data-dir/durable-write.js';
import { isSpaceError, SpaceWatch } from '../log/file/space-watch.js';
import { readAt } from '../log/file/read-at.js';
import { removeStaleFiles } from '../stale-files.js';
import { openKeyFile, type KeyFile } from './key-file.js';
import { checkDeletion, type Deletion } from './deletion-records.js';
import {
  DIGEST_BYTES,
  keyIdOfSlot,
  SECRET_BYTES,
  SLOT_BYTES,
  slotOfKeyId,
  slotPosition,
  slotSound,
  viewSlot,
} from './key-slots.js';
import { KeyStoreUnavailableError } from './key-store-errors.js';
import type { ContentKey, KeyId, KeyWriteOptions } from './key-store.js';
import type { FileKeyStore, FileKeyStoreOptions, FileKeyStoreStats } from './file-key-store-types.js';
import { MintedSlots } from './minted-slots.js';
import { RecentKeys } from './recent-keys.js';
import { planSlotWrites, type KeyWrite, type SlotErasure } from './slot-plan.js';
import { readSlotTable, type SlotTable } from './slot-table.js';
import { writeRunsDurably, type SlotFile } from './slot-writes.js';
import { referencedSlots, sweepOrphanSlots, type SweepOptions } from './sweep-orphans.js';

export type { FileKeyStore, FileKeyStoreOptions, FileKeyStoreStats } from './file-key-store-types.js';

export async function openFileKeyStore({
  dir,
  logger,
  maxPending = DEFAULT_MAX_PENDING_APPENDS,
  create = false,
}: FileKeyStoreOptions): Promise<FileKeyStore> {
  // A restore or a seal-history killed before it put its staging directory in place may have left
  // a copy of keys.db there, holding keys a later delete would destroy here only: gone first.
  await removeStaleFiles(
    dir,
    STAGING_DIR,
    logger,
    'removed the staging directory of an interrupted restore or seal-history',
  );
  const file = await openKeyFile({ dir, logger, create });
  try {
    const durable = await openDurable(file.path);
    logger.info({ path: file.path, slots: file.slots }, 'opened the key store');
    return new FileKeys(file, { fd: file.handle.fd, durable }, logger, maxPending);
  } catch (error) {
    await file.handle.close();
    throw error;
  }
}

/** Keys kept in memory for `get` (a few hundred KB). */
const RECENT_KEYS = 4096;

class FileKeys implements FileKeyStore {
  readonly description: string;
  private readonly batcher: Batcher<KeyWrite, undefined>;
  /** Slots durable in the file. */
  private written: number;
  private readonly ids: MintedSlots;
  /** The group commit being written, while it is. */
  private writing: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private counts = { puts: 0, syncs: 0, erasures: 0, unreadable: 0, deletions: 0 };
  private readonly newSecret = createSecretSource(SECRET_BYTES);
  /**
   * The keys put or read lately, so that an identical retry of a recent create (or a keyed retry)
   * opens its report without reading keys.db: at most RECENT_KEYS, and a key leaves it the moment
   * its destruction (or its deletion's record) is asked for, before anything is written.
   */
  private readonly recent = new RecentKeys(RECENT_KEYS);
  /** Erasures asked for so far: a key read while one was asked for is not kept (it may be that one). */
  private erasing = 0;
  /**
   * Slots whose erasure is asked for and not yet durable: `get` answers undefined for them and never
   * keeps them, so a read that starts after the ask (its slot still live in the file) cannot bring
   * the key back into memory, nor open the report for anyone, after the delete's answer.
   */
  private readonly erasingSlots = new Set<number>();
  /** While a write failed for want of space: watches for room, then takes writes again. */
  private readonly spaceWatch: SpaceWatch;

  constructor(
    private readonly file: KeyFile,
    /** The file's descriptors for the group commits' writes. */
    private readonly slotFile: SlotFile,
    private readonly logger: Logger,
    maxPending: number,
  ) {
    this.description = `keys:${file.path}`;
    this.written = file.slots;
    this.ids = new MintedSlots(file.slots);
    this.batcher = new Batcher((writes) => this.writeGroup(writes), { maxPending });
    this.spaceWatch = new SpaceWatch({ path: dirname(file.path) });
  }

  get slots(): number {
    return this.written;
  }

  holds(id: KeyId): boolean {
    const slot = slotOfKeyId(id);
    return slot !== undefined && slot < this.written;
  }

  stats(): FileKeyStoreStats {
    return { ...this.counts };
  }

  mint(contentDigest: Buffer): ContentKey {
    if (contentDigest.length !== DIGEST_BYTES)
      throw new RangeError(`a content digest has ${DIGEST_BYTES} bytes, not ${contentDigest.length}`);
    return { id: keyIdOfSlot(this.ids.mint()), secret: this.newSecret(), contentDigest: Buffer.from(contentDigest) };
  }

  put(keys: readonly ContentKey[], { timeoutMs }: KeyWriteOptions = {}): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    if (keys.length === 0) return Promise.resolve();
    // Taken for good: a put refused or timed out leaves its slots unused (mint new keys to retry).
    try {
      const taken = this.ids.takeForPut(
        keys,
        ({ secret, contentDigest }) => secret.length === SECRET_BYTES && contentDigest.length === DIGEST_BYTES,
      );
      return this.batcher.add({ kind: 'put', keys: taken }, undefined, timeoutMs).then(() => {
        // The newest of them only: memory keeps RECENT_KEYS at most.
        for (const key of keys.slice(-RECENT_KEYS)) this.recent.remember(slotOfKeyId(key.id) as number, key);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  destroy(ids: readonly KeyId[], { timeoutMs }: KeyWriteOptions = {}): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const slots = ids.flatMap((id) => this.ids.slotOf(id) ?? []);
    this.forget(slots);
    // A key given up before its put can never be put, and its slot is written destroyed all the
    // same: a history rewritten by `reports seal-history` names such a key in a void event.
    const givenUp = slots.filter((slot) => this.ids.giveUp(slot));
    const held = slots.filter((slot) => !givenUp.includes(slot));
    const writes = [
      ...(held.length > 0 ? [{ kind: 'destroy', slots: held } as const] : []),
      ...(givenUp.length > 0 ? [{ kind: 'erase', slots: givenUp.map((slot) => ({ slot })) } as const] : []),
    ];
    return Promise.all(writes.map((write) => this.batcher.add(write, undefined, timeoutMs))).then(() => undefined);
  }

  recordDeletions(deletions: readonly Deletion[], { timeoutMs }: KeyWriteOptions = {}): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    if (deletions.length === 0) return Promise.resolve();
    let slots: SlotErasure[];
    try {
      slots = deletions.map((deletion) => {
        checkDeletion(deletion);
        const keySlot = deletion.key === undefined ? undefined : this.ids.slotOf(deletion.key);
        if (keySlot !== undefined) {
          this.forget([keySlot]);
          this.ids.giveUp(keySlot);
        }
        // Content written in the clear has no key: its deletion takes a slot of its own.
        return {
          slot: keySlot ?? this.ids.take(),
          deletion: { reportId: deletion.reportId, version: deletion.version },
        };
      });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.batcher.add({ kind: 'erase', slots }, undefined, timeoutMs);
  }

  /** Keys whose erasure is asked for leave memory at once. */
  private forget(slots: readonly number[]): void {
    this.erasing += 1;
    for (const slot of slots) {
      this.erasingSlots.add(slot);
      this.recent.forget(slot);
    }
  }

  private refusal(): Error | undefined {
    return this.closed ? this.closedError() : this.failure;
  }

  private closedError(): KeyStoreUnavailableError {
    return new KeyStoreUnavailableError(`the key store ${this.file.path} is closed`);
  }

  private async writeGroup(writes: readonly KeyWrite[]): Promise<undefined[]> {
    if (this.failure) throw this.failure;
    const plan = planSlotWrites(writes, this.written);
    if (plan.runs.length > 0) {
      this.writing = writeRunsDurably(this.slotFile, plan.runs);
      try {
        await this.writing;
      } catch (cause) {
        // After a failed write the page cache and the disk may disagree, and a later sync could
        // acknowledge what is not there: fail every write until a restart checks the file again.
        if (isSpaceError(cause)) {
          this.failure = new KeyStoreUnavailableError(
            `the disk of the key store ${this.file.path} is full: writes are refused until space is freed, then resume by themselves`,
            { cause },
          );
          this.logger.error(
            { path: this.file.path, err: cause },
            'the disk of the key store is full: writes answer 503 until space is freed',
          );
          this.spaceWatch.start(() => this.resumeAfterFullDisk());
        } else {
          this.failure = new KeyStoreUnavailableError(
            `the key store ${this.file.path} failed to write; restart the service`,
            { cause },
          );
        }
        throw this.failure;
      } finally {
        this.writing = undefined;
      }
      this.counts.syncs += 1;
    }
    this.written = plan.end;
    // Zeroed in the file now: a read finds them destroyed. (A failed write keeps them unreadable.)
    for (const write of writes) {
      if (write.kind === 'destroy') for (const slot of write.slots) this.erasingSlots.delete(slot);
      else if (write.kind === 'erase') for (const { slot } of write.slots) this.erasingSlots.delete(slot);
    }
    this.counts.puts += plan.puts;
    this.counts.erasures += plan.destroyed;
    this.counts.deletions += plan.recorded;
    return writes.map(() => undefined);
  }

  /** Resolves once the group commit being written (if any) is durable or failed. */
  private async settled(): Promise<void> {
    await this.writing?.catch(() => undefined);
  }

  async get(id: KeyId): Promise<ContentKey | undefined> {
    if (this.closed) throw this.closedError();
    const slot = slotOfKeyId(id);
    if (slot === undefined || slot >= this.written || this.erasingSlots.has(slot)) return undefined;
    const known = this.recent.get(slot);
    if (known !== undefined) return known;
    const erasingBefore = this.erasing;
    let bytes = await readAt(this.file.handle, slotPosition(slot), SLOT_BYTES);
    if (!slotSound(bytes, 0) && this.writing) {
      // Read while a destroy was rewriting it: neither its old bytes nor its new. Read it again.
      await this.settled();
      bytes = await readAt(this.file.handle, slotPosition(slot), SLOT_BYTES);
    }
    const view = viewSlot(bytes, 0);
    if (view.kind === 'damaged') this.reportDamage([slot]);
    if (view.kind !== 'live' || this.erasingSlots.has(slot)) return undefined;
    const key = { id: Buffer.from(id), secret: view.secret, contentDigest: view.contentDigest };
    // An erasure asked for while this read was under way must not put the key back in memory.
    if (this.erasing === erasingBefore) this.recent.remember(slot, key);
    return key;
  }

  async wasPut(ids: readonly KeyId[]): Promise<boolean> {
    const slots = ids.map((id) => slotOfKeyId(id) ?? Number.POSITIVE_INFINITY);
    if (slots.length === 0) return true;
    const [first, last] = [Math.min(...slots), Math.max(...slots)];
    if (last >= this.written) return false;
    // One read for them all: a group commit's keys lie together.
    const bytes = await readAt(this.file.handle, slotPosition(first), (last - first + 1) * SLOT_BYTES);
    // A damaged slot was written once: damage is reported by get and verify, not taken for a lost put.
    return slots.every((slot) => viewSlot(bytes, (slot - first) * SLOT_BYTES).kind !== 'reserved');
  }

  async lookup(): Promise<SlotTable> {
    const table = await this.readTable();
    if (table.damaged.length > 0) this.reportDamage(table.damaged);
    return table;
  }

  async verify(): Promise<number[]> {
    return [...(await this.readTable()).damaged];
  }

  private async readTable(): Promise<SlotTable> {
    if (this.closed) throw this.closedError();
    return readSlotTable(this.file.handle, this.written, () => this.settled());
  }

  private reportDamage(slots: readonly number[]): void {
    this.counts.unreadable += slots.length;
    const named = slots.slice(0, 20);
    const list = `${named.join(', ')}${slots.length > named.length ? ', …' : ''}`;
    const what =
      slots.length === 1
        ? `key slot ${list} fails its check; its key is`
        : `${slots.length} key slots fail their check (${list}); their keys are`;
    this.logger.error(
      { path: this.file.path, slots: named, damagedSlots: slots.length },
      `${this.file.path}: ${what} unreadable`,
    );
  }

  async sweepOrphans(referencedIds: Iterable<KeyId>, { below, onDestroyed }: SweepOptions): Promise<number> {
    if (this.closed) throw this.closedError();
    const bound = Math.min(below, this.written);
    const referenced = await referencedSlots(referencedIds, bound);
    const read = async (first: number, count: number) => {
      await this.settled();
      return readAt(this.file.handle, slotPosition(first), count * SLOT_BYTES);
    };
    const swept = await sweepOrphanSlots(read, referenced, bound, async (ids) => {
      await this.destroy(ids);
      onDestroyed?.(ids);
    });
    if (swept.live + swept.damaged > 0)
      this.logger.info(
        { path: this.file.path, orphans: swept.live, damagedSlots: swept.damaged },
        'destroyed keys no live report uses (left by a crash)',
      );
    return swept.live + swept.damaged;
  }

  async resumeAfterFullDisk(): Promise<boolean> {
    if (this.closed || this.failure === undefined) return true;
    if (!isSpaceError(this.failure)) return false;
    // What the failed group wrote past the durable slots (the page cache may hold it): cut off.
    // Slots minted for its puts stay taken; a later group fills the gap with reserved slots.
    const { handle } = this.slotFile.durable;
    await handle.truncate(slotPosition(this.written));
    await handle.datasync();
    this.failure = undefined;
    this.spaceWatch.stop(false);
    this.logger.info({ path: this.file.path }, 'the key store takes writes again: space was freed');
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.spaceWatch.stop();
    // Writes already accepted are written and synced before the file is closed.
    await this.batcher.idle();
    await this.slotFile.durable.handle.close();
    await this.file.handle.close();
  }
}
