// A snapshot file read as it is parsed (readSnapshotFile): it gives what decodeSnapshot gives for
// the same bytes, small files and large ones alike (a large one's checksum is checked on a thread
// of its own while its body is read); a file whose checksum does not match is refused as such,
// whatever its body holds, and a small one is not even parsed.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stateDigest } from '../../src/projector/fold-log.js';
import { decodeSnapshot, encodeSnapshot, SNAPSHOT_MAGIC, type Snapshot } from '../../src/snapshot/snapshot-format.js';
import { readSnapshotFile } from '../../src/snapshot/snapshot-file.js';
import { tempDir } from '../helpers/server.js';
import { plainSnapshot, reportTable } from '../helpers/snapshots.js';
import { createReadModel } from '../../src/read-model/read-model.js';

function snapshotOf(reports: number, nameBytes: number): Snapshot {
  const name = 'n'.repeat(nameBytes);
  return {
    log: 'file:/data/events.log',
    createdAt: '2026-11-27T12:00:00.000Z',
    anchors: new Map([[0, 'a'.repeat(64)]]),
    model: createReadModel({
      reports: reportTable(Array.from({ length: reports }, (_, i) => [String(i * 3 - 1000), { name, tag: `t${i}` }])),
      keys: new Map([['key-1', { op: 'create', id: '5', outcome: { kind: 'created', incarnation: 1 } }]]),
      cursor: new Map([[0, reports]]),
      counts: { records: reports },
    }),
  };
}

/** Where the report table's chunk count lies: after the magic bytes and the meta data (u32 length, JSON). */
function chunkCountAt(bytes: Buffer): number {
  return SNAPSHOT_MAGIC.length + 4 + bytes.readUInt32LE(SNAPSHOT_MAGIC.length);
}

const file = suite<{ dir: string }>('readSnapshotFile');
file.before.each(async (context) => {
  context.dir = await tempDir('reports-snapshot-file-');
});
file.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

file(
  'reads a small file as decodeSnapshot reads its bytes, and refuses it changed without reading on',
  async ({ dir }) => {
    const bytes = encodeSnapshot(snapshotOf(500, 20));
    const path = join(dir, 'small.snap');
    await writeFile(path, bytes);
    const read = await readSnapshotFile(path);
    const decoded = decodeSnapshot(bytes);
    assert.ok(read.ok && decoded.ok);
    assert.equal(plainSnapshot(read.snapshot), plainSnapshot(decoded.snapshot));
    // A chunk count no file could hold: parsed, it would be refused as malformed; the checksum speaks first.
    bytes.writeUInt32LE(0xffffffff, chunkCountAt(bytes));
    await writeFile(path, bytes);
    assert.equal(await readSnapshotFile(path), { ok: false, reason: 'checksum mismatch' });
    assert.equal(
      await readSnapshotFile(join(dir, 'none.snap')).catch((error: NodeJS.ErrnoException) => error.code),
      'ENOENT',
    );
    await writeFile(path, Buffer.concat([Buffer.from('RSSNAP\u0000\u0005', 'latin1'), Buffer.alloc(64)]));
    assert.equal(await readSnapshotFile(path), { ok: false, reason: 'unknown format 5' });
  },
);

file(
  'reads a large file (its checksum on a thread of its own) as decodeSnapshot does, and refuses it changed in its records or its layout',
  async ({ dir }) => {
    // About 70 MB: past the size from which the checksum goes to a thread.
    const snapshot = snapshotOf(300_000, 220);
    const bytes = encodeSnapshot(snapshot);
    assert.ok(bytes.length > 64 * 2 ** 20, `${bytes.length} bytes`);
    const path = join(dir, 'large.snap');
    await writeFile(path, bytes);
    const read = await readSnapshotFile(path);
    assert.ok(read.ok);
    assert.is(read.snapshot.model.reports.size, 300_000);
    assert.is(stateDigest(read.snapshot.model.reports), stateDigest(snapshot.model.reports));
    assert.equal(read.snapshot.model.keys, snapshot.model.keys);
    // One byte of a name: the body parses, the checksum does not match.
    const renamed = Buffer.from(bytes);
    renamed[renamed.indexOf('nnnn', renamed.length / 2)] = 'N'.charCodeAt(0);
    await writeFile(path, renamed);
    assert.equal(await readSnapshotFile(path), { ok: false, reason: 'checksum mismatch' });
    // The chunk count: the body is malformed, and still the checksum is the reason given.
    const miscounted = Buffer.from(bytes);
    miscounted.writeUInt32LE(3, chunkCountAt(miscounted));
    await writeFile(path, miscounted);
    assert.equal(await readSnapshotFile(path), { ok: false, reason: 'checksum mismatch' });
  },
);

file.run();
