// Reading keys.db back (file-key-store.ts): a key by its id, from memory when it was put or read
// lately; whether keys were put; every slot at once. A key whose erasure is asked for leaves memory
// at once and is never answered again, even while its destroy is still being written. A slot that
// fails its check is logged by file and slot number only, never with what is left in it.
import { readSync } from 'node:fs';
import type { Logger } from 'pino';
import { readAt } from '../log/file/read-at.js';
import type { FileKeyWriter } from './file-key-writer.js';
import type { KeyFile } from './key-file.js';
import { SLOT_BYTES, slotOfKeyId, slotPosition, slotSound, viewSlot } from './key-slots.js';
import type { ContentKey, KeyId } from './key-store.js';
import { RecentKeys } from './recent-keys.js';
import type { KeyWrite } from './slot-plan.js';
import { readSlotTable, type SlotTable } from './slot-table.js';

/** Keys kept in memory for `get` (a few hundred KB). */
const RECENT_KEYS = 4096;

/** What the reads need of the writer: where the durable slots end, and the group commit in flight. */
export type WriteProgress = Pick<FileKeyWriter, 'written' | 'writeInFlight' | 'settled'>;

export class FileKeyReads {
  /** Reads (get, lookup) that met a slot failing its check. */
  private damagedReads = 0;
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

  constructor(
    private readonly file: KeyFile,
    private readonly progress: WriteProgress,
    private readonly logger: Logger,
  ) {}

  /** Reads (get, lookup) that met a slot failing its check. */
  get unreadable(): number {
    return this.damagedReads;
  }

  /** Keeps the keys of a put once it is durable. */
  rememberPut(keys: readonly ContentKey[]): void {
    // The newest of them only: memory keeps RECENT_KEYS at most.
    for (const key of keys.slice(-RECENT_KEYS)) this.recent.remember(slotOfKeyId(key.id) as number, key);
  }

  /** Keys whose erasure is asked for leave memory at once. */
  forget(slots: readonly number[]): void {
    this.erasing += 1;
    for (const slot of slots) {
      this.erasingSlots.add(slot);
      this.recent.forget(slot);
    }
  }

  /** The writes of a group commit now durable. */
  erased(writes: readonly KeyWrite[]): void {
    // Zeroed in the file now: a read finds them destroyed. (A failed write keeps them unreadable.)
    for (const write of writes) {
      if (write.kind === 'destroy') for (const slot of write.slots) this.erasingSlots.delete(slot);
      else if (write.kind === 'erase') for (const { slot } of write.slots) this.erasingSlots.delete(slot);
    }
  }

  async get(id: KeyId): Promise<ContentKey | undefined> {
    const slot = slotOfKeyId(id);
    if (slot === undefined || slot >= this.progress.written || this.erasingSlots.has(slot)) return undefined;
    const known = this.recent.get(slot);
    if (known !== undefined) return known;
    const erasingBefore = this.erasing;
    let bytes = await readAt(this.file.handle, slotPosition(slot), SLOT_BYTES);
    if (!slotSound(bytes, 0) && this.progress.writeInFlight) {
      // Read while a destroy was rewriting it: neither its old bytes nor its new. Read it again.
      await this.progress.settled();
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

  /**
   * The key `id` as the file holds it now, read at once (a start's check, before the first write):
   * undefined when it is not held, destroyed or its slot is damaged. Not remembered in memory.
   */
  getNow(id: KeyId): ContentKey | undefined {
    const slot = slotOfKeyId(id);
    if (slot === undefined || slot >= this.progress.written || this.erasingSlots.has(slot)) return undefined;
    const known = this.recent.get(slot);
    if (known !== undefined) return known;
    const bytes = Buffer.alloc(SLOT_BYTES);
    const read = readSync(this.file.handle.fd, bytes, 0, SLOT_BYTES, slotPosition(slot));
    const view = read === SLOT_BYTES ? viewSlot(bytes, 0) : undefined;
    return view?.kind === 'live'
      ? { id: Buffer.from(id), secret: view.secret, contentDigest: view.contentDigest }
      : undefined;
  }

  async wasPut(ids: readonly KeyId[]): Promise<boolean> {
    const slots = ids.map((id) => slotOfKeyId(id) ?? Number.POSITIVE_INFINITY);
    if (slots.length === 0) return true;
    const [first, last] = [Math.min(...slots), Math.max(...slots)];
    if (last >= this.progress.written) return false;
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
    return readSlotTable(this.file.handle, this.progress.written, () => this.progress.settled());
  }

  private reportDamage(slots: readonly number[]): void {
    this.damagedReads += slots.length;
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
}
