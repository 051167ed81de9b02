import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
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

seal.run();
