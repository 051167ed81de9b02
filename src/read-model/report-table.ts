// The reports, compactly. A Map of a million `{name, tag}` objects keyed by id strings costs about
// 135 bytes per report on the heap; this table keeps ~75: the id is two 32-bit words in an
// segmented hash table (id-table.ts: no string object, every int64 alike), and name and tag are
// bytes in large shared chunks (record-arena.ts: no object, no string header) rather than JS
// values; a sealed report's content is its key id and box as bytes. `get` builds the value on
// demand, which only an answer that reads a report does. Besides the live reports it keeps each id's version (how many events took
// effect on it), deleted ids included: a deleted report keeps its slot and version, not its record.
import type { ReportContent, ReportsState } from '../../projections/reports.js';
import { BytesOut, type BytesReader } from './bytes.js';
import { IdTable, NO_RECORD, type IdTableParts } from './id-table.js';
import { IdDigits, idText, parseId } from './int64-id.js';
import { RecordArena, type RecordArenaParts } from './record-arena.js';
import { canonicalScratch, isSealedRecord, sealedKeyId, writeCanonicalLine, type KeyDigest } from './report-record.js';

/** A ReportTable's contents as a structured clone carries them between threads. */
export interface ReportTableParts {
  readonly arena: RecordArenaParts;
  readonly index: IdTableParts;
}

/** Holes, as a share of the live records' bytes, from which a sharded fold's join compacts (a third of the arena). */
const JOIN_HOLES_SHARE = 0.5;

export class ReportTable implements ReportsState, Iterable<[string, ReportContent]> {
  private index = new IdTable();
  private arena = new RecordArena();
  // (# fields: a cache, not part of what two equal tables hold.)
  /** The fold asks about one id several times in a row (has, version, then set): it is parsed and found once. */
  #lastId = '';
  /** Whether #lastId is a canonical int64 (its words in #key), and its slot (-1: not held). */
  #lastValid = false;
  #lastSlot = -1;
  readonly #key = new Uint32Array(2);
  readonly #digits = new IdDigits();

  /** The slot of `id`, or -1 (not held, or not a canonical int64 id: #lastValid tells). */
  private slotOf(id: string): number {
    if (id !== this.#lastId) {
      this.#lastId = id;
      this.#lastValid = parseId(id, this.#key);
      this.#lastSlot = this.#lastValid ? this.index.find(this.#key) : -1;
    }
    return this.#lastSlot;
  }

  /** Forgets the cached slot (the id table was replaced). */
  private forgetLast(): void {
    this.#lastId = '';
    this.#lastValid = false;
    this.#lastSlot = -1;
  }

  /** Live reports. */
  get size(): number {
    return this.index.size;
  }

  /** Deleted reports whose ids (and versions) are remembered. */
  get deletedIds(): number {
    return this.index.deletedIds;
  }

  /** The id table's slots and segments. */
  get indexShape(): { readonly slots: number; readonly segments: number } {
    return { slots: this.index.slots, segments: this.index.segments };
  }

  /** Bytes of the id table (4 a slot of them are the versions). */
  get indexBytes(): number {
    return this.index.slotBytes;
  }

  /** Bytes the records' chunks hold (allocated, live or not): memory outside the JS heap. */
  get arenaBytes(): number {
    return this.arena.allocatedBytes;
  }

  has(id: string): boolean {
    const slot = this.slotOf(id);
    return slot >= 0 && this.index.recordAt(slot) !== NO_RECORD;
  }

  get(id: string): ReportContent | undefined {
    const slot = this.slotOf(id);
    const at = slot < 0 ? NO_RECORD : this.index.recordAt(slot);
    return at === NO_RECORD ? undefined : this.arena.read(at, this.index.versionAt(slot));
  }

  /** How many events have taken effect on report `id` (0: none); kept after the report is deleted. */
  version(id: string): number {
    const slot = this.slotOf(id);
    return slot < 0 ? 0 : this.index.versionAt(slot);
  }

  /** Creates or replaces the report `id` (a canonical decimal int64, else RangeError); one more event on it. */
  set(id: string, report: ReportContent): this {
    const slot = this.slotOf(id);
    if (!this.#lastValid) throw new RangeError(`report id "${id.slice(0, 40)}" is not a canonical decimal int64`);
    const at = this.arena.write(report);
    if (slot < 0) {
      this.#lastSlot = this.index.add(this.#key, at, 1);
    } else {
      const previous = this.index.recordAt(slot);
      if (previous !== NO_RECORD) this.arena.release(previous);
      this.index.update(slot, at);
    }
    this.compactIfWasteful();
    return this;
  }

  /** Deletes the live report `id` (one more event on it; its id and version stay); false when it is not live. */
  delete(id: string): boolean {
    const slot = this.slotOf(id);
    const at = slot < 0 ? NO_RECORD : this.index.recordAt(slot);
    if (at === NO_RECORD) return false;
    this.index.update(slot, NO_RECORD);
    this.arena.release(at);
    this.compactIfWasteful();
    return true;
  }

  /** An empty table for shard `shard` of 2^bits of a sharded fold (see joinShards), with room for `expectedIds` reports. */
  static forShard(bits: number, shard: number, expectedIds = 0): ReportTable {
    const table = new ReportTable();
    table.index = IdTable.forShard(bits, shard, expectedIds);
    return table;
  }

  /**
   * The tables of a sharded fold's 2^bits shards (made by forShard, each holding the reports of its
   * shard: shardOfId) as one: their chunks of records are appended to the first one's as they are,
   * their id tables' segments handed over. The tables are not to be used after.
   */
  static joinShards(tables: readonly ReportTable[]): ReportTable {
    const [first, ...others] = tables;
    if (first === undefined) return new ReportTable();
    const joined = new ReportTable();
    joined.arena = first.arena;
    const bases = [0, ...others.map((other) => joined.arena.append(other.arena))];
    joined.index = IdTable.joinShards(
      tables.map((table) => table.index),
      bases,
    );
    // Each shard's holes may have stayed under the threshold that all of them together pass, and a
    // shard that passed it compacted alone: the shards' split decided how much of the history's
    // holes were left (a history whose every second report was deleted kept a quarter of its
    // records as holes, or none, by the luck of the split). Nothing waits on a start's join: it
    // compacts from a third of holes on.
    joined.compactIfWasteful(JOIN_HOLES_SHARE);
    return joined;
  }

  /** What the table holds, for another thread: the chunks and the index's slots move with the message. */
  parts(): ReportTableParts {
    return { arena: this.arena.parts(), index: this.index.parts() };
  }

  /** The table another thread's `parts()` described (this process built it: not checked again). */
  static fromParts(parts: ReportTableParts): ReportTable {
    const table = new ReportTable();
    table.arena = RecordArena.fromParts(parts.arena);
    table.index = IdTable.fromParts(parts.index);
    return table;
  }

  /** Takes over what `other` holds, in place of this table's ids (none); `other` is not to be used after. */
  takeOver(other: ReportTable): void {
    if (this.size !== 0 || this.deletedIds !== 0) throw new Error('only an empty report table can take over another');
    this.index = other.index;
    this.arena = other.arena;
    this.forgetLast();
  }

  /** The live ids in id order. */
  *keys(): IterableIterator<string> {
    const ids: string[] = [];
    this.inIdOrder((id) => ids.push(id));
    yield* ids;
  }

  /** The live reports in id order. */
  *entries(): IterableIterator<[string, ReportContent]> {
    const positions: Array<[string, number]> = [];
    this.inIdOrder((id, at) => positions.push([id, at]));
    for (const [id, at] of positions) yield [id, this.arena.read(at, this.version(id))];
  }

  [Symbol.iterator](): IterableIterator<[string, ReportContent]> {
    return this.entries();
  }

  /**
   * Feeds every live report's canonical line (`["id","<content digest>"]`, see
   * projections/canonical.ts) to `update`, in id order, as bytes. Ids are written from their words
   * and a sealed report's digest comes from the key store (`keyDigest`) without a string made,
   * which keeps the digest of a million reports fast.
   */
  canonicalLines(update: (bytes: Buffer) => void, keyDigest: KeyDigest): void {
    const out = new BytesOut(update);
    const { keys, count } = this.index.liveInOrder();
    const digits = this.#digits;
    const scratch = canonicalScratch();
    for (let i = 0; i < count; i += 1) {
      const { chunk, position } = this.arena.locate(keys.payload[i] as number);
      const id = digits.load(keys.low[i] as number, keys.high[i] as number);
      writeCanonicalLine(out, chunk, position, id, keyDigest, scratch);
    }
    out.flush();
  }

  /**
   * The key id of every live report whose content is sealed (a view into the table: copy it to
   * keep it), of the reports live when the first is taken: the table may change between two (a
   * sweep takes them a slice per turn), and their records are read where they were then. Taken
   * in slot order, not sorted by id (ten million reports sorted by id, then read in that order, took
   * 1.8 s of a start in one piece; now their records' positions are copied at once, 0.1 s).
   */
  *sealedKeyIds(): Generator<Buffer> {
    const locate = this.arena.locatorNow();
    for (const at of this.index.records()) {
      const { chunk, position } = locate(at);
      if (isSealedRecord(chunk, position)) yield sealedKeyId(chunk, position);
    }
  }

  /**
   * Up to `limit` live reports whose content is sealed, in slot order (no sort: a start's check of
   * the key store against the log takes a few of them, however many reports there are).
   */
  sealedSample(limit: number): Array<{ readonly id: string; readonly report: ReportContent }> {
    const found: Array<{ low: number; high: number; at: number; version: number }> = [];
    if (limit <= 0) return [];
    const locate = this.arena.locatorNow();
    this.index.forEachLive((low, high, at, version) => {
      if (found.length >= limit) return;
      const { chunk, position } = locate(at);
      if (isSealedRecord(chunk, position)) found.push({ low, high, at, version });
    });
    return found.map(({ low, high, at, version }) => ({ id: idText(low, high), report: this.arena.read(at, version) }));
  }

  /** Calls `visit` with every live id and its record's position, in the canonical order of ids (projections/canonical.ts). */
  private inIdOrder(visit: (id: string, at: number) => void): void {
    const { keys, count } = this.index.liveInOrder();
    for (let i = 0; i < count; i += 1)
      visit(idText(keys.low[i] as number, keys.high[i] as number), keys.payload[i] as number);
  }

  /** The table as bytes (the snapshot's reports section): the record arena, then the id table. */
  writeTo(out: BytesOut): void {
    this.arena.writeTo(out);
    this.index.writeTo(out);
  }

  /**
   * What writeTo writes now, for a snapshot taken while the table goes on changing: the records'
   * chunks and the id table's segments go to `out` as they are, not copied (chunks are only ever
   * appended to; a segment written meanwhile copies its array first, IdTable.snapshot). The
   * returned release lets writes go to the segments again, once `out`'s bytes are written or given up.
   */
  snapshot(out: BytesOut): () => void {
    this.arena.writeTo(out);
    return this.index.snapshot(out);
  }

  /** Reads what writeTo wrote; throws RangeError on data that does not hold a table. */
  static readFrom(input: BytesReader): ReportTable {
    const table = new ReportTable();
    const arena = RecordArena.readFrom(input);
    table.arena = arena;
    table.index = IdTable.readFrom(input);
    const outside = arena.firstNotHeld(table.index.records());
    if (outside !== undefined) throw new RangeError(`a report at ${outside} points outside the table's bytes`);
    return table;
  }

  /** Deleted records leave holes; once they are most of the arena (`share` of the live bytes), the live records are copied together. */
  private compactIfWasteful(share = 1): void {
    if (this.arena.wasteful(share)) this.arena.compact((move) => this.index.remap(move));
  }
}
