import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkFrame, decodeFrame, encodeFrame, findValidFrame, FRAME_HEADER_BYTES, MAX_PAYLOAD_BYTES } from '../../src/log/file-frames.js';

const content = { key: '-9223372036854775808', value: Buffer.from([0, 1, 2, 0xfe, 0xff]), timestampMs: 1_714_564_800_123 };

const frames = suite('encodeFrame / decodeFrame');
frames('decodes exactly what was encoded', () => {
  const frame = encodeFrame(content);
  assert.equal(checkFrame(frame, 0, true), { kind: 'frame', bytes: frame.length });
  const decoded = decodeFrame(frame, 0);
  assert.is(decoded.key, content.key);
  assert.ok(decoded.value.equals(content.value));
  assert.is(decoded.timestampMs, content.timestampMs);
});
frames('decodes a frame that starts inside a larger buffer', () => {
  const first = encodeFrame({ key: 'a', value: Buffer.from('first'), timestampMs: 1 });
  const second = encodeFrame({ key: 'bb', value: Buffer.from('second'), timestampMs: 2 });
  const both = Buffer.concat([first, second]);
  assert.equal(checkFrame(both, first.length, true), { kind: 'frame', bytes: second.length });
  assert.is(decodeFrame(both, first.length).value.toString(), 'second');
});
frames('gives the value as a view of the buffer it was read from, not a copy (a fold copies nothing per record)', () => {
  const frame = encodeFrame(content);
  const decoded = decodeFrame(frame, 0);
  assert.ok(decoded.value.equals(content.value));
  assert.is(decoded.value.buffer, frame.buffer);
  frame.fill(0);
  assert.not.ok(decoded.value.equals(content.value), 'the view sees the buffer change');
});
frames.run();

const check = suite('checkFrame');
check('asks for more bytes when a frame runs past a buffer that is not the file end', () => {
  const frame = encodeFrame(content);
  assert.equal(checkFrame(frame.subarray(0, 4), 0, false), { kind: 'incomplete', needBytes: FRAME_HEADER_BYTES });
  assert.equal(checkFrame(frame.subarray(0, frame.length - 1), 0, false), { kind: 'incomplete', needBytes: frame.length });
});
check('calls a frame cut by the file end bad', () => {
  const frame = encodeFrame(content);
  assert.is(checkFrame(frame.subarray(0, 4), 0, true).kind, 'bad');
  assert.is(checkFrame(frame.subarray(0, frame.length - 1), 0, true).kind, 'bad');
});
check('catches a flipped bit anywhere in the payload with the CRC', () => {
  const frame = encodeFrame(content);
  for (let at = FRAME_HEADER_BYTES; at < frame.length; at += 1) {
    const damaged = Buffer.from(frame);
    damaged[at] = (damaged[at] ?? 0) ^ 0x01;
    assert.equal(checkFrame(damaged, 0, true), { kind: 'bad', reason: 'CRC mismatch' }, `byte ${at}`);
  }
});
check('calls a length of zero or above the maximum implausible', () => {
  const zero = Buffer.alloc(64);
  assert.match((checkFrame(zero, 0, true) as { reason: string }).reason, 'implausible');
  const huge = Buffer.alloc(64);
  huge.writeUInt32BE(MAX_PAYLOAD_BYTES + 1, 0);
  assert.match((checkFrame(huge, 0, false) as { reason: string }).reason, 'implausible');
});
check.run();

const find = suite('findValidFrame');
find('finds a valid frame behind garbage', () => {
  const garbage = Buffer.from('not a frame, just some bytes');
  assert.is(findValidFrame(Buffer.concat([garbage, encodeFrame(content)])), garbage.length);
});
find('finds nothing in zeros or in a cut frame', () => {
  assert.is(findValidFrame(Buffer.alloc(4096)), undefined);
  const frame = encodeFrame(content);
  assert.is(findValidFrame(frame.subarray(0, frame.length - 1)), undefined);
});
find.run();
