// The snapshot file format (7): binary, versioned, checksummed, written as a stream.
//   magic "RSSNAP\0\7" | u32 length + UTF-8 JSON meta (log, cursor, counts, createdAt, anchors,
//   and the deletions whose keys were not yet destroyed: `unerased`, optional, ignored by the readers before it)
//   | the reports table (report-table.ts: record chunks, then the id table's segments, each its
//   slots as raw words, every int64 id in 8 bytes with its version; sealed content as its events
//   sealed it) | the idempotency keys (keys-section.ts) | SHA-256 of everything before it (32 bytes)
// A file whose checksum does not match is never trusted; one whose checksum matches is still
// checked for shape, since a checksum only proves that some writer wrote it. Any other format is
// refused, naming the format found (the server folds the log instead). Formats 4 and 5 held idempotency
// keys claimed by superseded events, which the fold no longer records, and their requests' names
// and tags, which a key no longer remembers; format 6 held the ids in one open-addressing table.
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { KeyIdString, ReportIdString } from '../../projections/events.js';
import { keysWriter, readKeys } from './keys-section.js';
import { BytesIn, BytesOut, type BytesReader } from '../read-model/bytes.js';
import type { Cursor } from '../log/event-log.js';
import type { UnerasedDeletion } from '../keys/deletion-records.js';
import { createReadModel, type FoldCounts, type ReadModel } from '../read-model/read-model.js';
import { ReportTable } from '../read-model/report-table.js';

export const SNAPSHOT_FORMAT = 7 as const;
export const SNAPSHOT_MAGIC = Buffer.from('RSSNAP\u0000\u0007', 'latin1');
export const CHECKSUM_BYTES = 32;

/**
 * Per partition with records folded: a digest of the last record folded (the one at cursor - 1),
 * or null when no record is there (an offset Kafka never delivers). Ties the snapshot to the exact
 * history it folded, not only to the log's name.
 */
export type Anchors = ReadonlyMap<number, string | null>;

export interface Snapshot {
  /** Which log the positions belong to (`EventLog.identity`). */
  readonly log: string;
  readonly createdAt: string;
  readonly anchors: Anchors;
  /** Where the log's start-up scan may resume for this history (`ResumableScan.resumePoint`). */
  readonly resume?: string;
  /** The read model at the snapshot's cursor. */
  readonly model: ReadModel;
  /**
   * Deletions the model folded whose keys were not confirmed destroyed when it was taken (by the
   * server writing it, or still held in the key topic for `reports snapshot`). A start from the
   * snapshot folds none of them again, so this is how it learns that their keys are still to be
   * destroyed and that a retry of those deletes must wait for it. Ids, versions and key ids only.
   */
  readonly unerased?: readonly UnerasedDeletion[];
}

/**
 * At most this many deletions are listed: a key store refusing for hours queues more, and the meta
 * is one JSON text. The key topic's sweep, a while after the next start, finds the keys of the rest.
 */
export const MAX_UNERASED = 10_000;
/** A listed deletion: report id, version, key id, as events carry them. */
const UnerasedEntry = Type.Tuple([ReportIdString, Type.Integer({ minimum: 1 }), KeyIdString]);
const checkUnerasedEntry = TypeCompiler.Compile(UnerasedEntry);

const Meta = Type.Object({
  log: Type.String(),
  createdAt: Type.String(),
  cursor: Type.Array(Type.Tuple([Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 })])),
  counts: Type.Object({
    records: Type.Integer({ minimum: 0 }),
    voidEvents: Type.Integer({ minimum: 0 }),
    invalid: Type.Integer({ minimum: 0 }),
  }),
  anchors: Type.Array(Type.Tuple([Type.Integer({ minimum: 0 }), Type.Union([Type.String(), Type.Null()])])),
  resume: Type.Optional(Type.String()),
  newestKey: Type.Optional(Type.String()),
  unerased: Type.Optional(Type.Array(UnerasedEntry, { maxItems: MAX_UNERASED })),
});
type Meta = Static<typeof Meta>;
const checkMeta = TypeCompiler.Compile(Meta);

/** The read model encoded at one moment: what a snapshot file holds besides its header. */
export interface EncodedModel {
  readonly cursor: Cursor;
  readonly counts: FoldCounts;
  readonly newestKey?: string;
  /** The reports and idempotency-key sections. */
  readonly sections: readonly Buffer[];
}

/** Encodes the model at once, synchronously: the model may change as soon as this returns. */
export function encodeModel(model: ReadModel): EncodedModel {
  const sections: Buffer[] = [];
  const out = new BytesOut((bytes) => sections.push(bytes));
  model.reports.writeTo(out);
  keysWriter(out, model.keys, model.keys.size)(Number.POSITIVE_INFINITY);
  out.flush();
  return { cursor: new Map(model.cursor), counts: { ...model.counts }, ...newest(model), sections };
}

function newest({ newestKey }: ReadModel): { newestKey?: string } {
  return newestKey === undefined ? {} : { newestKey };
}

/** The read model as encodeModel would encode it now, finished later while the model goes on changing (beginSnapshot). */
export interface ModelSnapshot {
  /** Encodes up to `keys` more idempotency keys; whether the encoding is complete. */
  step(keys: number): boolean;
  /** The encoding as of beginSnapshot, once `step` said it is complete. */
  finish(): EncodedModel;
  /** Lets the model's writes go to what the encoding holds: once its bytes are written, or given up. */
  release(): void;
}

/**
 * encodeModel spread over turns of the event loop: the cursor taken and the report table's bytes
 * handed on as they are now (its chunks and segments, which stay as they are until `release`:
 * ReportTable.snapshot), then the keys there were at the start written a slice per `step`.
 */
export function beginSnapshot(model: ReadModel): ModelSnapshot {
  const cursor = new Map(model.cursor);
  const counts = { ...model.counts };
  const newestKey = newest(model);
  const sections: Buffer[] = [];
  const out = new BytesOut((bytes) => sections.push(bytes));
  const release = model.reports.snapshot(out);
  let writeKeys: (perSlice: number) => boolean;
  try {
    writeKeys = keysWriter(out, model.keys, model.keys.size);
  } catch (error) {
    // No snapshot to release for the caller: the table's hold ends here.
    release();
    throw error;
  }
  let complete = false;
  return {
    step(keys) {
      complete = writeKeys(keys);
      return complete;
    },
    finish() {
      if (!complete) throw new Error('the snapshot is not encoded yet');
      out.flush();
      return { cursor, counts, ...newestKey, sections };
    },
    release,
  };
}

/** The snapshot file's bytes before the checksum, in order: magic, meta, the model's sections. */
export function snapshotBody(
  { log, createdAt, anchors, resume, unerased }: Omit<Snapshot, 'model'>,
  encoded: EncodedModel,
): Buffer[] {
  const head: Buffer[] = [];
  const out = new BytesOut((bytes) => head.push(bytes));
  out.bytes(SNAPSHOT_MAGIC);
  const meta: Meta = {
    log,
    createdAt,
    cursor: [...encoded.cursor],
    counts: { ...encoded.counts },
    anchors: [...anchors],
    ...(resume === undefined ? {} : { resume }),
    ...(encoded.newestKey === undefined ? {} : { newestKey: encoded.newestKey }),
    ...listed(unerased),
  };
  out.text(JSON.stringify(meta));
  out.flush();
  return [...head, ...encoded.sections];
}

/**
 * The meta's `unerased`: what a reader of this format takes (a key id no event could carry is left
 * out, never a reason for the next start to refuse the snapshot), at most MAX_UNERASED.
 */
function listed(unerased: readonly UnerasedDeletion[] | undefined): { unerased?: [string, number, string][] } {
  const entries = (unerased ?? [])
    .map(({ reportId, version, key }): [string, number, string] => [reportId, version, key])
    .filter((entry) => checkUnerasedEntry.Check(entry))
    .slice(0, MAX_UNERASED);
  return entries.length === 0 ? {} : { unerased: entries };
}

/** The snapshot's checksum: SHA-256 of its body, fed a piece at a time by whoever writes the body. */
export function snapshotChecksum(): { update(piece: Buffer): void; digest(): Buffer } {
  const hash = createHash('sha256');
  return {
    update: (piece) => void hash.update(piece),
    digest: () => hash.digest(),
  };
}

/** The snapshot file's bytes, in order: body, then the checksum. */
export function snapshotFile(header: Omit<Snapshot, 'model'>, encoded: EncodedModel): Buffer[] {
  const chunks = snapshotBody(header, encoded);
  const checksum = snapshotChecksum();
  for (const chunk of chunks) checksum.update(chunk);
  return [...chunks, checksum.digest()];
}

/** The whole snapshot as one buffer (tests and small models). */
export function encodeSnapshot(snapshot: Snapshot): Buffer {
  return Buffer.concat(snapshotFile(snapshot, encodeModel(snapshot.model)));
}

export type Decoded =
  { readonly ok: true; readonly snapshot: Snapshot } | { readonly ok: false; readonly reason: string };

/**
 * Why a file of `fileBytes` bytes that begins with `head` (its first SNAPSHOT_MAGIC.length bytes,
 * or fewer) is not a snapshot of this format; undefined when it may be one.
 */
export function magicProblem(head: Buffer, fileBytes: number): string | undefined {
  if (
    fileBytes < SNAPSHOT_MAGIC.length + CHECKSUM_BYTES ||
    !head.subarray(0, SNAPSHOT_MAGIC.length - 1).equals(SNAPSHOT_MAGIC.subarray(0, -1))
  )
    return 'not a snapshot (bad magic bytes)';
  const format = head[SNAPSHOT_MAGIC.length - 1];
  if (format !== SNAPSHOT_FORMAT) return `unknown format ${String(format)}`;
  return undefined;
}

/** A whole snapshot file in memory: its magic, its checksum, then its body (decodeBody). */
export function decodeSnapshot(file: Buffer): Decoded {
  const problem = magicProblem(file, file.length);
  if (problem !== undefined) return { ok: false, reason: problem };
  const body = file.subarray(0, file.length - CHECKSUM_BYTES);
  if (!createHash('sha256').update(body).digest().equals(file.subarray(body.length)))
    return { ok: false, reason: 'checksum mismatch' };
  const input = new BytesIn(body);
  input.position = SNAPSHOT_MAGIC.length;
  return decodeBody(input);
}

/**
 * The snapshot a file's body holds after its magic bytes, up to its checksum: the caller checks
 * the checksum (before, or while this reads: a file read as it is parsed), and trusts nothing here
 * until it matches. Every length read is checked against what is left before anything is allocated.
 */
export function decodeBody(input: BytesReader): Decoded {
  try {
    const meta: unknown = JSON.parse(input.text());
    if (!checkMeta.Check(meta))
      return {
        ok: false,
        reason: `the meta data has the wrong shape at ${checkMeta.Errors(meta).First()?.path ?? '/'}`,
      };
    const reports = ReportTable.readFrom(input);
    const keys = readKeys(input);
    if (!input.done) return { ok: false, reason: 'bytes follow the last section' };
    const model = createReadModel({
      reports,
      keys,
      cursor: new Map(meta.cursor),
      counts: meta.counts,
      ...(meta.newestKey === undefined ? {} : { newestKey: meta.newestKey }),
    });
    return {
      ok: true,
      snapshot: {
        log: meta.log,
        createdAt: meta.createdAt,
        anchors: new Map(meta.anchors),
        ...(meta.resume === undefined ? {} : { resume: meta.resume }),
        ...(meta.unerased === undefined
          ? {}
          : { unerased: meta.unerased.map(([reportId, version, key]) => ({ reportId, version, key })) }),
        model,
      },
    };
  } catch (error) {
    if (error instanceof RangeError || error instanceof SyntaxError)
      return { ok: false, reason: `malformed: ${error.message}` };
    throw error;
  }
}
