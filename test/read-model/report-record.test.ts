// A report's record: every name and tag comes back exactly, whatever its length (the byte counts
// are varints: one byte below 128, more above) and characters, and so does sealed content (its key
// id and box, as the event carried them); the record's length is what was reserved for it; its
// canonical line is the content digest's, from the key store for sealed content.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { canonicalLine } from '../../projections/canonical.js';
import type { ReportContent, StoredReport } from '../../projections/reports.js';
import { contentDigest } from '../../projections/sealing.js';
import { BytesOut } from '../../src/read-model/bytes.js';
import { IdDigits } from '../../src/read-model/int64-id.js';
import {
  readRecord,
  recordLength,
  storedLength,
  canonicalScratch,
  writeCanonicalLine,
  writeRecord,
} from '../../src/read-model/report-record.js';

/** Names of each length where a varint gains a byte, in one-byte and two-byte characters. */
function reports(): StoredReport[] {
  const all: StoredReport[] = [];
  for (const length of [0, 1, 127, 128, 16_383, 16_384, 2_097_152]) {
    const plain = 'n'.repeat(length);
    const wide = 'ü€'.repeat(length).slice(0, length);
    all.push(
      { name: plain },
      { name: wide },
      { name: plain, tag: wide },
      { name: 'x', tag: plain },
      { name: '"quoted"\n', tag: 't' },
    );
  }
  return all;
}

/** Sealed content of each box size where a varint gains a byte, with and without the event's basis. */
function sealed(): ReportContent[] {
  return [0, 100, 111, 112, 16_383, 16_384].flatMap((bytes) => {
    const content = { key: randomBytes(6).toString('base64url'), box: randomBytes(bytes + 16).toString('base64') };
    return [{ sealed: content }, { sealed: content, expectedversion: 6 }];
  });
}

const record = suite('writeRecord');

record(
  'writes a record that reads back exactly and takes the bytes recordLength said, at any offset, in the clear or sealed',
  () => {
    for (const report of [...reports(), ...sealed()]) {
      const length = recordLength(report);
      const chunk = Buffer.alloc(length + 10, 0xee);
      writeRecord(chunk, 7, report);
      assert.equal(readRecord(chunk, 7, 7), report);
      assert.is(storedLength(chunk, 7), length);
      assert.equal([chunk[6], chunk[7 + length]], [0xee, 0xee], 'nothing written around it');
    }
  },
);

record(
  'gives the canonical line of the content digest: taken of the content in the clear, from the key store for sealed content',
  () => {
    const digits = new IdDigits().load(0x2a, 0);
    const line = (report: ReportContent, keyDigest: (keyId: Buffer) => Buffer | undefined) => {
      const chunk = Buffer.alloc(recordLength(report));
      writeRecord(chunk, 0, report);
      const lines: Buffer[] = [];
      const out = new BytesOut((bytes) => lines.push(Buffer.from(bytes)));
      const copied = (keyId: Uint8Array, start: number, end: number, into: Uint8Array) => {
        const digest = keyDigest(Buffer.from(keyId.subarray(start, end)));
        digest?.copy(into);
        return digest !== undefined;
      };
      writeCanonicalLine(out, chunk, 0, digits, copied, canonicalScratch());
      out.flush();
      return Buffer.concat(lines).toString('utf8');
    };
    // Beside those: ASCII content digested from its bytes as they lie, and content a byte a
    // character that is not ASCII (its UTF-8 differs from its bytes), in the name or in the tag.
    const mixed: StoredReport[] = [
      { name: 'Quarterly report', tag: 'finance' },
      { name: 'caf\u00e9', tag: 'finance' },
      { name: 'Quarterly report', tag: '\u00fc' },
      { name: '\u007f', tag: '' },
      { name: 'n'.repeat(4095), tag: '' },
      { name: 'n'.repeat(4096), tag: '' },
    ];
    for (const report of [...reports().filter((candidate) => candidate.name.length < 20_000), ...mixed]) {
      assert.is(
        line(report, () => undefined),
        canonicalLine('42', contentDigest(report)),
      );
    }
    const digest = contentDigest({ name: 'sealed' });
    const [first] = sealed();
    const keyId = Buffer.from((first as { sealed: { key: string } }).sealed.key, 'base64url');
    assert.is(
      line(first as ReportContent, (id) => (id.equals(keyId) ? digest : undefined)),
      canonicalLine('42', digest),
    );
    assert.is(
      line(first as ReportContent, () => undefined),
      '["42",null]\n',
    );
  },
);

record.run();
