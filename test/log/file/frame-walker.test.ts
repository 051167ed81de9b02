// The file log's frame walker: every record of a file of batches handed over in order with its
// parts, whatever the chunk boundaries; a visitor that says stop ends the walk; a file shorter than
// its records throws, naming the record.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeBatch } from '../../../src/log/file/batches.js';
import { ChunkWalker, walkLogFile } from '../../../src/log/file/frame-walker.js';
import { encodeFrame, FILE_MAGIC } from '../../../src/log/file/frames.js';

const records = Array.from({ length: 7 }, (_, i) => ({
  key: `key-${i}`,
  value: Buffer.from(`value ${'v'.repeat(i * 3)}`),
  timestampMs: 1_700_000_000_000 + i,
}));
const batches = [records.slice(0, 3), records.slice(3, 4), records.slice(4)].map((batch) =>
  encodeBatch(batch.map(encodeFrame)),
);
const body = Buffer.concat(batches);

type Seen = [offset: number, key: string, value: string, timestampMs: number];

function seer(seen: Seen[], stopAt = Infinity) {
  return (
    buffer: Buffer,
    offset: number,
    parts: { timestampMs: number; keyStart: number; keyEnd: number; end: number },
  ) => {
    seen.push([
      offset,
      buffer.toString('utf8', parts.keyStart, parts.keyEnd),
      buffer.toString('utf8', parts.keyEnd, parts.end),
      parts.timestampMs,
    ]);
    return offset < stopAt;
  };
}

const expected: Seen[] = records.map((record, i) => [i, record.key, record.value.toString(), record.timestampMs]);

test('hands over every record in order, whatever the chunk boundaries', () => {
  for (const chunkBytes of [1, 7, 16, 40, body.length]) {
    const seen: Seen[] = [];
    const walker = new ChunkWalker(records.length, seer(seen));
    let at = 0;
    let chunk = Buffer.alloc(0);
    while (!walker.done) {
      chunk = Buffer.concat([chunk, body.subarray(at, at + chunkBytes)]);
      at += chunkBytes;
      chunk = chunk.subarray(walker.walk(chunk));
    }
    assert.equal(seen, expected, `chunks of ${chunkBytes} bytes`);
  }
});

test('reads the log file itself, after its magic, and stops when the visitor says so', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'frame-walker-'));
  try {
    const path = join(dir, 'events.log');
    await writeFile(path, Buffer.concat([FILE_MAGIC, body]));
    const range = { path, startByte: FILE_MAGIC.length, endByte: FILE_MAGIC.length + body.length, records: 7 };
    const all: Seen[] = [];
    const progress: number[] = [];
    assert.is(
      walkLogFile(range, seer(all), (walked) => progress.push(walked)),
      7,
    );
    assert.equal(all, expected);
    assert.equal(progress, [7]);
    const some: Seen[] = [];
    assert.is(walkLogFile(range, seer(some, 4)), 5);
    assert.equal(some, expected.slice(0, 5));
    assert.throws(
      () => walkLogFile({ ...range, records: 8 }, seer([])),
      /the log ends at byte \d+, before record #7 \(was it truncated\?\)/,
    );
    assert.throws(
      () => walkLogFile({ ...range, endByte: range.endByte - 3 }, seer([])),
      /record #6 runs past the end of the log/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
