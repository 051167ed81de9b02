// The embedded key store: keys.db in the data directory, beside the embedded log (key-slots.ts has
// the format). A key's id is its slot number, and slots are never reused: an id names one key for
// the life of the file, so a destroyed key's id can never come back holding another key (an event
// that names it must never open again, and a key must never seal two contents under its fixed
// nonce). Group commit as the log's: puts and destroys that wait together are written together and
// share one sync, and each resolves only once it is durable. Nothing logged carries a secret or a
// content digest: lines name the file and slot numbers only. The group commits and their failures
// are file-key-writer.ts's; the reads and the keys kept in memory for them, file-key-reads.ts's.
import type { Logger } from 'pino';
import { createSecretSource } from './secret-source.js';
import { DEFAULT_MAX_PENDING_APPENDS } from '../log/batcher.js';
import { STAGING_DIR } from '../data-dir/data-dir.js';
import { openDurable } from '../data-dir/durable-write.js';
import { readAt } from '../log/file/read-at.js';
import { removeStaleFiles } from '../stale-files.js';
import { openKeyFile, type KeyFile } from './key-file.js';
import { checkDeletion, type Deletion } from './deletion-records.js';
import { DIGEST_BYTES, keyIdOfSlot, SECRET_BYTES, SLOT_BYTES, slotOfKeyId, slotPosition } from './key-slots.js';
import { KeyStoreUnavailableError } from './key-store-errors.js';
import type { ContentKey, KeyId, KeyWriteOptions } from './key-store.js';
import type { FileKeyStore, FileKeyStoreOptions, FileKeyStoreStats } from './file-key-store-types.js';
import { FileKeyReads } from './file-key-reads.js';
import { FileKeyWriter } from './file-key-writer.js';
import { MintedSlots } from './minted-slots.js';
import type { SlotErasure } from './slot-plan.js';
import type { SlotTable } from './slot-table.js';
import type { SlotFile } from './slot-writes.js';
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

class FileKeys implements FileKeyStore {
  readonly description: string;
  private readonly ids: MintedSlots;
  private readonly newSecret = createSecretSource(SECRET_BYTES);
  /** The group commits, and the failure that refuses writes while there is one. */
  private readonly writer: FileKeyWriter;
  /** The reads, and the keys kept in memory for them. */
  private readonly reads: FileKeyReads;

  constructor(
    private readonly file: KeyFile,
    slotFile: SlotFile,
    private readonly logger: Logger,
    maxPending: number,
  ) {
    this.description = `keys:${file.path}`;
    this.ids = new MintedSlots(file.slots);
    this.writer = new FileKeyWriter(file.path, slotFile, file.slots, logger, maxPending, (writes) =>
      this.reads.erased(writes),
    );
    this.reads = new FileKeyReads(file, this.writer, logger);
  }

  get slots(): number {
    return this.writer.written;
  }

  holds(id: KeyId): boolean {
    const slot = slotOfKeyId(id);
    return slot !== undefined && slot < this.writer.written;
  }

  stats(): FileKeyStoreStats {
    const { puts, syncs, erasures, deletions } = this.writer.counts;
    return { puts, syncs, erasures, unreadable: this.reads.unreadable, deletions };
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
      return this.writer.add({ kind: 'put', keys: taken }, timeoutMs).then(() => {
        this.reads.rememberPut(keys);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  destroy(ids: readonly KeyId[], { timeoutMs }: KeyWriteOptions = {}): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const slots = ids.flatMap((id) => this.ids.slotOf(id) ?? []);
    this.reads.forget(slots);
    // A key given up before its put can never be put, and its slot is written destroyed all the
    // same: a history rewritten by `reports seal-history` names such a key in a void event.
    const givenUp = slots.filter((slot) => this.ids.giveUp(slot));
    const held = slots.filter((slot) => !givenUp.includes(slot));
    const writes = [
      ...(held.length > 0 ? [{ kind: 'destroy', slots: held } as const] : []),
      ...(givenUp.length > 0 ? [{ kind: 'erase', slots: givenUp.map((slot) => ({ slot })) } as const] : []),
    ];
    return Promise.all(writes.map((write) => this.writer.add(write, timeoutMs))).then(() => undefined);
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
          this.reads.forget([keySlot]);
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
    return this.writer.add({ kind: 'erase', slots }, timeoutMs);
  }

  /** Closing stops the writer first: it takes no write after. */
  private get closed(): boolean {
    return this.writer.closed;
  }

  private refusal(): Error | undefined {
    return this.closed ? this.closedError() : this.writer.failure;
  }

  private closedError(): KeyStoreUnavailableError {
    return new KeyStoreUnavailableError(`the key store ${this.file.path} is closed`);
  }

  get(id: KeyId): Promise<ContentKey | undefined> {
    if (this.closed) return Promise.reject(this.closedError());
    return this.reads.get(id);
  }

  getNow(id: KeyId): ContentKey | undefined {
    if (this.closed) throw this.closedError();
    return this.reads.getNow(id);
  }

  wasPut(ids: readonly KeyId[]): Promise<boolean> {
    return this.reads.wasPut(ids);
  }

  lookup(): Promise<SlotTable> {
    if (this.closed) return Promise.reject(this.closedError());
    return this.reads.lookup();
  }

  verify(): Promise<number[]> {
    if (this.closed) return Promise.reject(this.closedError());
    return this.reads.verify();
  }

  async sweepOrphans(referencedIds: Iterable<KeyId>, { below, onDestroyed }: SweepOptions): Promise<number> {
    if (this.closed) throw this.closedError();
    const bound = Math.min(below, this.writer.written);
    const referenced = await referencedSlots(referencedIds, bound);
    const read = async (first: number, count: number) => {
      await this.writer.settled();
      return readAt(this.file.handle, slotPosition(first), count * SLOT_BYTES);
    };
    const swept = await sweepOrphanSlots(read, referenced, bound, async (ids) => {
      await this.destroy(ids);
      onDestroyed?.(ids);
    });
    if (swept.live + swept.damaged > 0)
      this.logger.info(
        { path: this.file.path, orphans: swept.live, damagedSlots: swept.damaged },
        'destroyed keys no live report uses (left by a crash, or by a restore of an older backup)',
      );
    return swept.live + swept.damaged;
  }

  resumeAfterFullDisk(): Promise<boolean> {
    return this.writer.resumeAfterFullDisk();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writer.close();
    await this.file.handle.close();
  }
}
