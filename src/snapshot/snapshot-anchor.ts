// What ties a snapshot to the history it folded: per partition, a digest of the last record it
// folded. At load the log must hold the same record at the same position; a log restored from an
// older copy and written on since, or a Kafka topic deleted and created again under its name, has
// other records there (new CloudEvent ids) and the snapshot is not used. Works through the
// EventLog port, so both logs answer the same way: read from cursor - 1 in each partition and
// stop once every partition has shown its first record.
import type { ResumeFrom } from '../log/capabilities.js';
import type { Cursor, EventLog } from '../log/event-log.js';
import { readRecords } from '../log/record-batches.js';
import { recordDigest } from '../log/record-digest.js';
import type { Anchors, Snapshot } from './snapshot-format.js';

export { recordDigest } from '../log/record-digest.js';

/** The anchors of `cursor` on `log`: the digest of the record at cursor - 1 of every partition read from. */
export async function readAnchors(
  log: Pick<EventLog, 'head' | 'readBatches'>,
  cursor: Cursor,
): Promise<Map<number, string | null>> {
  const wanted = new Map(
    [...cursor].filter(([, offset]) => offset > 0).map(([partition, offset]) => [partition, offset - 1]),
  );
  const anchors = new Map<number, string | null>();
  if (wanted.size === 0) return anchors;
  // Other partitions are read from their head, so they yield nothing.
  const from = new Map([...(await log.head()), ...wanted]);
  const stop = new AbortController();
  try {
    for await (const record of readRecords(log, from, { signal: stop.signal })) {
      const { partition, offset } = record.position;
      const target = wanted.get(partition);
      if (target === undefined || anchors.has(partition)) continue;
      anchors.set(partition, offset === target ? recordDigest(record) : null);
      if (anchors.size === wanted.size) break;
    }
  } finally {
    stop.abort();
  }
  for (const partition of wanted.keys()) if (!anchors.has(partition)) anchors.set(partition, null);
  return anchors;
}

/** Why the snapshot does not belong to this history, or undefined when its anchors match the log. */
export async function anchorMismatch(
  log: Pick<EventLog, 'head' | 'readBatches'>,
  { model: { cursor }, anchors }: Pick<Snapshot, 'model' | 'anchors'>,
): Promise<string | undefined> {
  const actual = await readAnchors(log, cursor);
  for (const [partition, digest] of actual) {
    const expected = anchors.get(partition);
    if (expected !== digest) {
      const position = `${partition}:${(cursor.get(partition) ?? 0) - 1}`;
      return expected === undefined
        ? `it records no anchor for partition ${partition}`
        : `the record at ${position} is not the one it folded`;
    }
  }
  return undefined;
}

/**
 * Where the log may resume its scan at open for this snapshot, with what it must find there: the
 * file log trusts the point only if the snapshot's last record is in the batch at that byte.
 */
export function resumeOf({
  resume,
  anchors,
  model: { cursor },
}: Pick<Snapshot, 'resume' | 'anchors' | 'model'>): ResumeFrom | undefined {
  const records = cursor.get(0) ?? 0;
  const lastRecordDigest = anchors.get(0);
  if (resume === undefined || records === 0 || typeof lastRecordDigest !== 'string') return undefined;
  return { point: resume, records, lastRecordDigest };
}

export type { Anchors };
