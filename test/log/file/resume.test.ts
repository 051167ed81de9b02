// Opening the embedded log at a resume point (where a snapshot's history ends): only the log from
// there is scanned at open, the records before it when first read, with the same damage checks;
// a point that does not hold as a whole (a batch boundary of this file holding the snapshot's last
// record, by its digest, where the point's record number puts it) is ignored and the whole log scanned.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ResumeFrom } from '../../../src/log/capabilities.js';
import type { LogMessage, LogRecord } from '../../../src/log/event-log.js';
import { recordDigest } from '../../../src/log/record-digest.js';
import { openFileLog, type FileLog } from '../../../src/log/file/file-log.js';
import { CorruptLogError } from '../../../src/log/file/recovery.js';
import { collect, rejection } from '../../helpers/async.js';
import { eventsLogPath, flipByte, frameStarts } from '../../helpers/file-history.js';
import { memoryLogger, tempDir } from '../../helpers/server.js';
import { readRecords } from '../../../src/log/record-batches.js';

const message = (i: number): LogMessage => ({ key: String(i), value: Buffer.from(`record ${i}`) });
const plain = (records: readonly LogRecord[]) =>
  records.map(({ key, value, position }) => [key, value.toString(), position.offset]);

interface Context {
  dir: string;
  /** The resume point after the third append (records 0..5 in three batches of two). */
  resume: ResumeFrom;
}

const resume = suite<Context>('openFileLog at a resume point');

resume.before.each(async (context) => {
  context.dir = await tempDir('reports-resume-');
  const log = await openFileLog({ dir: context.dir, logger: memoryLogger().logger });
  for (let i = 0; i < 6; i += 2) await log.append([message(i), message(i + 1)]);
  context.resume = {
    point: log.resumePoint?.(new Map([[0, 6]])) ?? '',
    records: 6,
    lastRecordDigest: recordDigest(message(5)),
  };
  assert.equal(
    log.resumePoint?.(new Map([[0, 3]])),
    undefined,
    'no point for a history that ends before the last batch',
  );
  await log.close();
});
resume.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

async function openAt(
  dir: string,
  resumeFrom: ResumeFrom,
): Promise<{ log: FileLog; opened: Record<string, unknown> | undefined }> {
  const { logger, lines } = memoryLogger();
  const log = await openFileLog({ dir, logger, resumeFrom });
  return { log, opened: lines().find((line) => line['msg'] === 'opened the embedded event log') };
}

resume(
  'scans only the last batch at open and still reads every record, the earlier ones scanned when read',
  async ({ dir, resume: point }) => {
    assert.match(point.point, /^4@\d+$/);
    const { log, opened } = await openAt(dir, point);
    try {
      assert.equal([opened?.['records'], opened?.['scannedFrom']], [6, 4]);
      assert.equal(await log.head(), new Map([[0, 6]]));
      assert.equal(plain(await collect(readRecords(log, new Map([[0, 5]])))), [['5', 'record 5', 5]]);
      assert.equal(
        plain(await collect(readRecords(log, new Map()))),
        [0, 1, 2, 3, 4, 5].map((i) => [String(i), `record ${i}`, i]),
      );
      const [position] = await log.append([message(6)]);
      assert.equal(position, { partition: 0, offset: 6 });
      const resumedIdentity = log.identity;
      const full = await openFileLog({ dir: `${dir}`, logger: memoryLogger().logger }).catch((error: unknown) => error);
      // The directory is locked by the resumed writer; its identity is compared after it closes.
      assert.instance(full, Error);
      await log.close();
      const whole = await openFileLog({ dir, logger: memoryLogger().logger });
      assert.is(whole.identity, resumedIdentity, 'the same identity as a full scan gives');
      await whole.close();
    } finally {
      await log.close();
    }
  },
);

resume(
  'ignores a point that is not a batch boundary, lies beyond the file, or names another record or record number, and scans everything',
  async ({ dir, resume: point }) => {
    const [offset, byte] = point.point.split('@').map(Number) as [number, number];
    const wrong: ResumeFrom[] = [
      { ...point, point: `${offset}@${byte + 1}` },
      { ...point, point: `${offset}@${byte + 10_000}` },
      { ...point, point: 'garbage' },
      { ...point, lastRecordDigest: recordDigest(message(4)) },
      { ...point, point: `${offset - 1}@${byte}` },
      { ...point, records: 7 },
    ];
    for (const resumeFrom of wrong) {
      const { log, opened } = await openAt(dir, resumeFrom);
      try {
        assert.equal([opened?.['records'], opened?.['scannedFrom']], [6, undefined], JSON.stringify(resumeFrom));
        assert.is((await collect(readRecords(log, new Map()))).length, 6);
      } finally {
        await log.close();
      }
    }
  },
);

resume(
  'refuses to read records before the point when they are damaged, naming the record',
  async ({ dir, resume: point }) => {
    const starts = await frameStarts(dir);
    await flipByte(eventsLogPath(dir), (starts[1] as number) + 12);
    const { log } = await openAt(dir, point);
    try {
      assert.equal(plain(await collect(readRecords(log, new Map([[0, 4]])))).length, 2, 'the scanned part reads');
      const error = await rejection(collect(readRecords(log, new Map())));
      assert.instance(error, CorruptLogError);
      assert.match(String(error), /corrupt record #0 at byte 8 \(.*frame 2 of 2 of the batch\)/);
      assert.instance(await rejection(log.scanFrom?.(new Map()) ?? Promise.resolve()), CorruptLogError);
    } finally {
      await log.close();
    }
  },
);

resume.run();
