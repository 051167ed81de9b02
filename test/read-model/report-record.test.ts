// A report's record: every name and tag comes back exactly, whatever its length (the byte counts
// are varints: one byte below 128, more above) and characters, and the record's length is what
// was reserved for it; its canonical line is JSON.stringify's.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StoredReport } from '../../projections/reports.js';
import { BytesOut } from '../../src/read-model/bytes.js';
import { IdDigits } from '../../src/read-model/int64-id.js';
import { readRecord, recordLength, storedLength, writeCanonicalLine, writeRecord } from '../../src/read-model/report-record.js';

/** Names of each length where a varint gains a byte, in one-byte and two-byte characters. */
function reports(): StoredReport[] {
  const all: StoredReport[] = [];
  for (const length of [0, 1, 127, 128, 16_383, 16_384, 2_097_152]) {
    const plain = 'n'.repeat(length);
    const wide = 'ü€'.repeat(length).slice(0, length);
    all.push({ name: plain }, { name: wide }, { name: plain, tag: wide }, { name: 'x', tag: plain }, { name: '"quoted"\n', tag: 't' });
  }
  return all;
}

const record = suite('writeRecord');

record('writes a record that reads back exactly and takes the bytes recordLength said, at any offset', () => {
  for (const report of reports()) {
    const length = recordLength(report.name, report.tag);
    const chunk = Buffer.alloc(length + 10, 0xee);
    writeRecord(chunk, 7, report.name, report.tag);
    assert.equal(readRecord(chunk, 7), report);
    assert.is(storedLength(chunk, 7), length);
    assert.equal([chunk[6], chunk[7 + length]], [0xee, 0xee], 'nothing written around it');
  }
});

record('gives the canonical line JSON.stringify gives, plain or not', () => {
  const digits = new IdDigits().load(0x2a, 0);
  for (const report of reports().filter((candidate) => candidate.name.length < 20_000)) {
    const chunk = Buffer.alloc(recordLength(report.name, report.tag));
    writeRecord(chunk, 0, report.name, report.tag);
    const lines: Buffer[] = [];
    const out = new BytesOut((bytes) => lines.push(Buffer.from(bytes)));
    writeCanonicalLine(out, chunk, 0, digits);
    out.flush();
    assert.is(Buffer.concat(lines).toString('utf8'), `${JSON.stringify(report.tag === undefined ? ['42', report.name] : ['42', report.name, report.tag])}\n`);
  }
});

record.run();
