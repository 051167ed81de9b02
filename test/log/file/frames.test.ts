import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  decodeFrame,
  encodeFrame,
  frameBytesAt,
  FRAME_HEADER_BYTES,
  MAX_PAYLOAD_BYTES,
} from '../../../src/log/file/frames.js';

const content = {
  key: '-9223372036854775808',
  value: Buffer.from([0, 1, 2, 0xfe, 0xff]),
  timestampMs: 1_714_564_800_123,
};

const frames = suite('encodeFrame / decodeFrame');
frames('decodes exactly what was encoded', () => {
  const frame = encodeFrame(content);
  assert.is(frameBytesAt(frame, 0, frame.length), frame.length);
  const decoded = decodeFrame(frame, 0);
  assert.is(decoded.key, content.key);
  assert.ok(decoded.value.equals(content.value));
  assert.is(decoded.timestampMs, content.timestampMs);
});
frames('decodes a frame that starts inside a larger buffer', () => {
  const first = encodeFrame({ key: 'a', value: Buffer.from('first'), timestampMs: 1 });
  const second = encodeFrame({ key: 'bb', value: Buffer.from('second'), timestampMs: 2 });
  const both = Buffer.concat([first, second]);
  assert.is(frameBytesAt(both, first.length, both.length), second.length);
  assert.is(decodeFrame(both, first.length).value.toString(), 'second');
});
frames(
  'gives the value as a view of the buffer it was read from, not a copy (a fold copies nothing per record)',
  () => {
    const frame = encodeFrame(content);
    const decoded = decodeFrame(frame, 0);
    assert.ok(decoded.value.equals(content.value));
    assert.is(decoded.value.buffer, frame.buffer);
    frame.fill(0);
    assert.not.ok(decoded.value.equals(content.value), 'the view sees the buffer change');
  },
);
frames.run();

const check = suite('frameBytesAt');
check('calls a frame cut by the end of its batch bad', () => {
  const frame = encodeFrame(content);
  assert.type(frameBytesAt(frame, 0, 4), 'string');
  assert.type(frameBytesAt(frame, 0, frame.length - 1), 'string');
});
check('catches a flipped bit anywhere in the payload with the CRC', () => {
  const frame = encodeFrame(content);
  for (let at = FRAME_HEADER_BYTES; at < frame.length; at += 1) {
    const damaged = Buffer.from(frame);
    damaged[at] = (damaged[at] ?? 0) ^ 0x01;
    assert.is(frameBytesAt(damaged, 0, damaged.length), 'CRC mismatch', `byte ${at}`);
  }
});
check('calls a length of zero or above the maximum implausible', () => {
  const zero = Buffer.alloc(64);
  assert.match(String(frameBytesAt(zero, 0, zero.length)), 'implausible');
  const huge = Buffer.alloc(64);
  huge.writeUInt32BE(MAX_PAYLOAD_BYTES + 1, 0);
  assert.match(String(frameBytesAt(huge, 0, huge.length)), 'implausible');
});
check.run();
