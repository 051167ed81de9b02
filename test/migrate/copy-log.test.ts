// copyLog, the copy behind `reports migrate`, from one embedded log to another: every event copied
// with its content sealed anew under keys of the target (no name in the clear in any file of it,
// plain events sealed too), the digests equal; a live report whose key is missing stays without
// content; stopped before any of its writes, it leaves a target a server starts on, and a rerun
// completes it; a delete written to the source since destroys the target's key on the next run.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyIdText, parseKeyId, type KeyId } from '../../src/keys/key-store.js';
import { readFileKeys } from '../../src/keys/read-file-keys.js';
import { readKeyTable } from '../../src/keys/key-tables.js';
import { recordedDeletions } from '../../src/keys/recorded-deletions.js';
import type { SlotTable } from '../../src/keys/slot-table.js';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { readRecords } from '../../src/log/record-batches.js';
import { isSealed } from '../../projections/events.js';
import { collect } from '../helpers/async.js';
import { copyLog, type CopyResult } from '../../src/migrate/copy-log.js';
import { UnopenableContentError } from '../../src/migrate/reseal.js';
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import { replaySummary, reports } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import {
  fileSource,
  fileTarget,
  intercept,
  SOURCE_NAMES,
  stoppingAt,
  StoppedHere,
  writeFileSource,
} from '../helpers/migration.js';
import { sealedCreate } from '../helpers/sealed-history.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import {
  payloadBytes,
  RecordTooLargeError,
  type AppendOptions,
  type EventLog,
  type LogMessage,
} from '../../src/log/event-log.js';
import { openedReport } from '../helpers/opened.js';

async function copy(
  sourceDir: string,
  targetDir: string,
  stopAt?: number,
  batch = 4,
): Promise<CopyResult & { writes: number }> {
  const [source, target] = [await fileSource(sourceDir), await fileTarget(targetDir)];
  const stopping = stopAt === undefined ? undefined : stoppingAt(target.end, stopAt);
  try {
    const result = await copyLog(source.end, stopping?.end ?? target.end, { batch });
    return { ...result, writes: stopping?.writes() ?? 0 };
  } finally {
    await target.close();
    await source.close();
  }
}

const copying = suite<{ source: string; target: string }>('copyLog: embedded log to embedded log');

copying.before.each(async (context) => {
  [context.source, context.target] = [await tempDir('reports-copy-source-'), await tempDir('reports-copy-target-')];
  await writeFileSource(context.source);
});
copying.after.each(async ({ source, target }) => {
  await Promise.all([rm(source, { recursive: true, force: true }), rm(target, { recursive: true, force: true })]);
});

copying(
  'copies every event sealed anew under keys of the target: equal digests, no name in the clear in its files',
  async ({ source, target }) => {
    const result = await copy(source, target);
    assert.equal([result.read, result.copied, result.resealed, result.erased], [20, 20, 11, 5]);
    assert.is(result.targetDigest, result.sourceDigest);
    assert.is(
      (await replaySummary({ REPORTS_DATA_DIR: target })).digest,
      (await replaySummary({ REPORTS_DATA_DIR: source })).digest,
    );
    const files = (await Promise.all(['events.log', 'keys.db'].map((name) => readFile(join(target, name))))).map(
      (bytes) => bytes.toString('latin1'),
    );
    for (const name of SOURCE_NAMES)
      for (const file of files) assert.not.ok(file.includes(name), `"${name}" is in a file of the target`);
    // As a server and `reports seal-history` keep it: every delete of the history recorded, for restores to apply again.
    const recorded = recordedDeletions([(await readKeyTable(target)) as SlotTable]);
    assert.equal(
      [
        recorded.deletions,
        ...[
          ['101', 2],
          ['4', 2],
          ['8', 2],
          ['12', 2],
        ].map(([id, version]) => recorded.deleted(String(id), Number(version))),
      ],
      [4, true, true, true, true],
    );
    const verified = await reports(['verify', '--json'], { env: { REPORTS_DATA_DIR: target } });
    const findings = JSON.parse(verified.stdout) as {
      problems: number;
      sealedReports: number;
      unopenedReports: number;
      first: { position: string };
    };
    assert.equal(
      [findings.problems, findings.sealedReports, findings.unopenedReports, findings.first.position],
      [1, 12, 1, 'report 13'],
      'as on the source: report 13 is live without its key',
    );
    const server = await startTestServer({}, { dataDir: target });
    try {
      const reports = server.projector.model.reports;
      assert.equal(await openedReport(reports, server.keys, '100'), { name: 'plain live', tag: 'old tag' });
      assert.equal(await openedReport(reports, server.keys, '4'), { name: 'back again' });
      assert.equal(await openedReport(reports, server.keys, '1'), { name: 'name 1', tag: 'tagged' });
      assert.is(
        await openedReport(reports, server.keys, '13'),
        undefined,
        'live, its key lost in the source: no content in the target either',
      );
      assert.equal([reports.has('8'), reports.has('101')], [false, false]);
    } finally {
      await server.dispose();
    }
  },
);

copying('a second run copies nothing and the digests stay equal', async ({ source, target }) => {
  await copy(source, target);
  const again = await copy(source, target);
  assert.equal([again.read, again.copied], [20, 0]);
  assert.is(again.targetDigest, again.sourceDigest);
});

copying(
  'stopped before any one of its writes, it leaves a target a server starts on, and a rerun completes it',
  async ({ source, target }) => {
    let stops = 0;
    for (let k = 1; ; k += 1) {
      await rm(target, { recursive: true, force: true });
      const stopped = await copy(source, target, k).then(
        () => false,
        (error: unknown) => {
          if (!(error instanceof StoppedHere)) throw error;
          return true;
        },
      );
      if (!stopped) break;
      stops += 1;
      const server = await startTestServer({}, { dataDir: target });
      const digest = await serverDigest(server).finally(() => server.dispose());
      assert.is(
        `sha256:${(await replaySummary({ REPORTS_DATA_DIR: target })).digest}`,
        digest,
        `stopped at write ${k}`,
      );
      const resumed = await copy(source, target);
      assert.is(resumed.targetDigest, resumed.sourceDigest, `resumed after write ${k}`);
    }
    // Five batches of four: an append each, and before some a write of the keys of content left erased.
    assert.ok(stops >= 6, `${stops} stops`);
  },
);

copying(
  "a delete written to the source after a copy destroys the target's key of that report on the next run",
  async ({ source, target }) => {
    await copy(source, target);
    const keyId = await liveKeyId(target, '1');
    assert.ok((await readFileKeys(target)).get(keyId), 'the key of report 1 in the target');
    await appendToFileLog(source, [deleted('1')]);
    const rerun = await copy(source, target);
    assert.equal([rerun.copied, rerun.targetDigest], [1, rerun.sourceDigest]);
    assert.is((await readFileKeys(target)).get(keyId), undefined);
  },
);

copying(
  "stopped between appending a delete and destroying the target's key it ends, the next run destroys it",
  async ({ source, target }) => {
    await copy(source, target);
    const keyId = await liveKeyId(target, '1');
    await appendToFileLog(source, [deleted('1')]);
    // The rerun's writes: the append of the delete (1), then the record of its deletion (2).
    const stopped = await copy(source, target, 2).then(
      () => false,
      (error: unknown) => error instanceof StoppedHere,
    );
    assert.ok(stopped, 'stopped at the erasure');
    assert.ok((await readFileKeys(target)).get(keyId), 'the delete is in the target, its key still held');
    const rerun = await copy(source, target);
    assert.equal([rerun.copied, rerun.targetDigest], [0, rerun.sourceDigest]);
    assert.is((await readFileKeys(target)).get(keyId), undefined, 'destroyed by the run after');
  },
);

copying('appends no more at a time than the target log takes in one append', async ({ source, target }) => {
  const [from, to] = [await fileSource(source), await fileTarget(target)];
  const sizes: number[] = [];
  const limit = 1500;
  const small = intercept<EventLog>(to.end.log, {
    maxRecordBytes: limit,
    append: (messages: readonly LogMessage[], options?: AppendOptions) => {
      const bytes = messages.reduce((sum, message) => sum + payloadBytes(message), 0);
      sizes.push(bytes);
      if (bytes > limit) return Promise.reject(new RecordTooLargeError(limit, bytes));
      return to.end.log.append(messages, options);
    },
  });
  try {
    const result = await copyLog(from.end, { log: small, keys: to.end.keys }, { batch: 500 });
    assert.is(result.targetDigest, result.sourceDigest);
    assert.ok(sizes.length > 1, `${sizes.length} appends`);
    assert.ok(
      sizes.every((bytes) => bytes <= limit),
      `appends of ${sizes.join(', ')} bytes`,
    );
  } finally {
    await to.close();
    await from.close();
  }
});

copying('a live report whose key does not open its content stops the copy, naming it', async ({ target }) => {
  const dir = await tempDir('reports-copy-unopenable-');
  try {
    const log = await openFileLog({ dir, logger: memoryLogger().logger });
    const { event, key } = sealedCreate(created('7', 'sealed for another basis'), log.keyStore());
    await log.append([{ key: '7', value: encodeEvent(basedOn(event, 0)), contentKey: key }]).finally(() => log.close());
    try {
      await copy(dir, target);
      assert.unreachable('the copy went on');
    } catch (error) {
      assert.instance(error, UnopenableContentError);
      assert.is(
        (error as Error).message,
        `the content of live report 7 does not open with its key ${keyIdText(key.id)}; run \`reports verify\``,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

copying.run();

/** The key id of the last create of report `id` in the log in `dir`. */
async function liveKeyId(dir: string, id: string): Promise<KeyId> {
  const log = await openFileLogReader({ dir, logger: memoryLogger().logger });
  const records = await collect(readRecords(log, new Map())).finally(() => log.close());
  const creates = records.flatMap((record) => {
    const decoded = decodeEvent(record.value);
    return decoded.ok &&
      decoded.event.type === 'ReportCreated' &&
      decoded.event.data.id === id &&
      isSealed(decoded.event.data)
      ? [decoded.event.data.sealed.key]
      : [];
  });
  return parseKeyId(creates.at(-1) ?? '');
}
