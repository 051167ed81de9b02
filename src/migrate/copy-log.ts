// The copy behind `reports migrate`: every event of the source up to its head, in order, into the
// target, with its content sealed anew under keys of the target (reseal.ts) and written as
// target-writer.ts says. Resumable and idempotent: events already in the target (by CloudEvent id)
// are not copied again. The source is read twice: a fold to its head (what is live there, and its
// digest), then the copy, folding again as it goes, so that a create is known for the one whose
// report is live at the end (its content is carried; any other is left erased). The target is read
// before (the events it holds) and after (its digest). Each digest is taken with its own log's
// keys: they are equal when the target holds the source's history.
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import { evolve } from '../../projections/reports.js';
import type { Deletion } from '../keys/deletion-records.js';
import { cursorPassed, type EventLog, type LogPosition } from '../log/event-log.js';
import { readRecords } from '../log/record-batches.js';
import { foldLog, stateDigest } from '../projector/fold-log.js';
import { createReadModel } from '../read-model/read-model.js';
import { ReportTable } from '../read-model/report-table.js';
import { defaultFoldThreads } from '../read-model/sharded-fold.js';
import type { KeyLookup } from '../keys/key-store.js';
import { contentKeyId, openCreate } from '../keys/open-create.js';
import type { ToolKeys } from '../keys/tool-keys.js';
import { resealCreate } from './reseal.js';
import { foldEnding, TargetWriter, type KeyFate, type MigrationTarget } from './target-writer.js';

/** Events appended to the target at a time. */
const BATCH = 500;

export interface MigrationSource {
  readonly log: EventLog;
  readonly keys: ToolKeys;
}

export interface CopyOptions {
  readonly signal?: AbortSignal;
  /** Called with the number of source records read so far. */
  readonly onProgress?: (read: number) => void;
  /** Names a record's position in messages. */
  readonly describe?: (position: LogPosition) => string;
  readonly batch?: number;
}

export interface CopyResult {
  /** Source records read (up to its head when the copy started). */
  readonly read: number;
  /** Of them, copied by this run. */
  readonly copied: number;
  /** Creates copied whose content was sealed under a key the target keeps. */
  readonly resealed: number;
  /** Creates copied whose content was left erased (a key destroyed at once). */
  readonly erased: number;
  readonly aborted: boolean;
  readonly sourceDigest: string;
  readonly targetDigest: string;
}

/** A record of the source that is not an event: the copy stops before it. */
export class InvalidSourceRecordError extends Error {
  constructor(position: string, reason: string) {
    super(`record ${position} is not a valid event (${reason}); run \`reports verify\``);
    this.name = 'InvalidSourceRecordError';
  }
}

/** The event ids the target holds, and its reports as they fold. */
async function readTarget(
  log: EventLog,
  signal?: AbortSignal,
): Promise<{ ids: Set<string>; reports: ReportTable; ended: Deletion[] }> {
  const ids = new Set<string>();
  const reports = new ReportTable();
  const ended: Deletion[] = [];
  for await (const record of readRecords(log, new Map(), signal ? { signal } : {})) {
    const decoded = decodeEvent(record.value);
    if (!decoded.ok) continue;
    ids.add(decoded.event.id);
    foldEnding(reports, decoded.event, ended);
  }
  return { ids, reports, ended };
}

async function digestOf(log: EventLog, keys: KeyLookup): Promise<string> {
  const model = createReadModel();
  await foldLog(log, model, { threads: defaultFoldThreads() });
  return stateDigest(model.reports, keys);
}

export async function copyLog(
  source: MigrationSource,
  target: MigrationTarget,
  options: CopyOptions = {},
): Promise<CopyResult> {
  const {
    signal,
    onProgress = () => undefined,
    describe = ({ partition, offset }) => `${partition}:${offset}`,
    batch = BATCH,
  } = options;
  const head = await source.log.head();
  const end = createReadModel();
  await foldLog(source.log, end, { to: head, threads: defaultFoldThreads(), ...(signal ? { signal } : {}) });
  // Read after the head: every key the events up to it need was durable before them.
  const sourceKeys = await source.keys.lookup();
  const present = await readTarget(target.log, signal);
  const writer = new TargetWriter(target, present.reports, await target.keys.lookup());
  // What a run stopped between an append and its erasures left: finished before anything is copied.
  await writer.finishErasures(present.ended);
  const walk = new ReportTable();
  let read = 0;
  let resealed = 0;
  let erased = 0;
  for await (const record of readRecords(source.log, new Map(), signal ? { signal } : {})) {
    // A batch read may hold many records: a stop is looked for at each.
    if (signal?.aborted === true) break;
    if (!cursorPassed(head, record.position)) continue;
    onProgress((read += 1));
    const decoded = decodeEvent(record.value);
    if (!decoded.ok) throw new InvalidSourceRecordError(describe(record.position), decoded.reason);
    const { event } = decoded;
    const before = walk.version(event.data.id);
    const change = evolve(walk, event);
    if (present.ids.has(event.id)) continue;
    if (event.type === 'ReportDeleted') {
      await writer.push({ message: { key: event.subject, value: record.value }, event });
    } else {
      // The create whose report is live at the end of the source: its content is carried.
      const live =
        change.kind === 'created' &&
        end.reports.has(event.data.id) &&
        end.reports.version(event.data.id) === before + 1;
      const keyId = contentKeyId(event);
      const opened = openCreate(event, keyId === undefined ? undefined : sourceKeys.get(keyId));
      const copied = resealCreate(event, opened, {
        live,
        mint: (digest) => target.keys.mint(digest, { partitionKey: event.data.id }),
      });
      if (copied.live) resealed += 1;
      else erased += 1;
      // A create that took effect and is not live at the end: the delete after it took the report one version further.
      const fate: KeyFate = copied.live
        ? { kind: 'kept' }
        : change.kind === 'created' && !live
          ? { kind: 'deleted', version: before + 2 }
          : { kind: 'dropped' };
      await writer.push({
        message: { key: event.subject, value: encodeEvent(copied.event) },
        event: copied.event,
        key: { key: copied.key, fate },
      });
    }
    if (writer.pending >= batch) await writer.flush();
  }
  await writer.flush();
  const aborted = signal?.aborted === true;
  const [sourceDigest, targetDigest] = aborted
    ? ['', '']
    : [stateDigest(end.reports, sourceKeys), await digestOf(target.log, await target.keys.lookup())];
  return { read, copied: writer.copied, resealed, erased, aborted, sourceDigest, targetDigest };
}
