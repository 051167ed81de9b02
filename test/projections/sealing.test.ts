import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import {
  contentBytes,
  contentDigest,
  contentOf,
  openBox,
  openContent,
  SEAL_TAG_BYTES,
  sealBox,
  sealContent,
} from '../../projections/sealing.js';

const seal = suite("sealing a report's content");

seal('opens with its key what it sealed, tag or no tag, any Unicode', () => {
  const secret = randomBytes(32);
  for (const report of [
    { name: 'Q3 revenue', tag: 'finance' },
    { name: '' },
    { name: 'Performance review — J. Smith', tag: '' },
    { name: '数据 🚀', tag: 'ÿ' },
  ]) {
    const box = sealBox(report, secret, { id: '42', expectedversion: 2 });
    assert.is(box.length, contentBytes(report).length + SEAL_TAG_BYTES);
    assert.equal(openBox(box, secret, { id: '42', expectedversion: 2 }), report);
  }
});

seal('holds nothing of the name or tag in the clear', () => {
  const box = sealBox({ name: 'Performance review J Smith', tag: 'confidential' }, randomBytes(32), { id: '7' });
  assert.not.ok(box.toString('latin1').includes('Smith'));
  assert.not.ok(box.toString('latin1').includes('confidential'));
});

seal('does not open under another key, for another id or decision, or once changed', () => {
  const secret = randomBytes(32);
  const report = { name: 'x', tag: 'y' };
  const box = sealBox(report, secret, { id: '1', expectedversion: 0 });
  assert.is(openBox(box, randomBytes(32), { id: '1', expectedversion: 0 }), undefined);
  assert.is(openBox(box, secret, { id: '2', expectedversion: 0 }), undefined);
  assert.is(openBox(box, secret, { id: '1', expectedversion: 2 }), undefined);
  assert.is(openBox(box, secret, { id: '1' }), undefined);
  const changed = Buffer.from(box);
  changed[0] = (changed[0] as number) ^ 1;
  assert.is(openBox(changed, secret, { id: '1', expectedversion: 0 }), undefined);
  assert.is(openBox(Buffer.alloc(3), secret, { id: '1', expectedversion: 0 }), undefined);
});

seal('travels in data.sealed as base64 and opens from there', () => {
  const secret = randomBytes(32);
  const sealed = sealContent({ name: 'n', tag: 't' }, 'AAAAAAAAAAE', secret, { id: '9', expectedversion: 4 });
  assert.is(sealed.key, 'AAAAAAAAAAE');
  assert.equal(openContent(sealed, secret, { id: '9', expectedversion: 4 }), { name: 'n', tag: 't' });
});

seal('gives one digest to one content, whatever seals it, and another to another', () => {
  assert.equal(contentDigest({ name: 'a', tag: 'b' }), contentDigest({ name: 'a', tag: 'b' }));
  assert.not.equal(contentDigest({ name: 'a', tag: 'b' }), contentDigest({ name: 'a' }));
  assert.not.equal(contentDigest({ name: 'a', tag: '' }), contentDigest({ name: 'a' }));
  assert.equal(contentOf(contentBytes({ name: 'a', tag: '' })), { name: 'a', tag: '' });
  assert.is(contentDigest({ name: 'x' }).length, 32);
});

seal('takes the digest as the SHA-256 of the content bytes, whatever bytes the digest holds', () => {
  // Many digests, so that every byte value (0x80-0xff too, which a text round trip could change) occurs in some.
  for (let i = 0; i < 2000; i += 1) {
    const report = i % 2 === 0 ? { name: `report ${i} · é ✓` } : { name: `report ${i}`, tag: `t${i}` };
    assert.equal(contentDigest(report), createHash('sha256').update(contentBytes(report)).digest());
  }
});

seal("is AES-256-GCM under the key's 32 bytes, as another implementation computes it, both ways", async () => {
  // Bytes past 127 in the key: the key reaches the cipher as a latin1 string, which must be the same bytes.
  const secret = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 128) % 256));
  const report = { name: 'Performance review — J. Smith', tag: 'hr' };
  const context = { id: '9007199254740993', expectedversion: 3 };
  const algorithm = {
    name: 'AES-GCM',
    iv: new Uint8Array(12),
    additionalData: Buffer.from('ReportCreated\n9007199254740993\n3'),
    tagLength: 128,
  };
  const key = await webcrypto.subtle.importKey('raw', secret, 'AES-GCM', false, ['encrypt', 'decrypt']);
  const theirs = Buffer.from(await webcrypto.subtle.encrypt(algorithm, key, contentBytes(report)));
  assert.equal(sealBox(report, secret, context), theirs);
  const opened = Buffer.from(await webcrypto.subtle.decrypt(algorithm, key, sealBox(report, secret, context)));
  assert.equal(contentOf(opened), report);
  assert.equal(openBox(theirs, secret, context), report);
});

seal.run();
