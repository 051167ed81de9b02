// The on-disk format of the embedded log. A file starts with an 8-byte magic; then batches of
// frames (file-batches.ts; format 1, written by earlier versions, has frames only). A frame is:
//   u32 BE payload length | u32 BE CRC-32 of the payload | payload
//   payload = f64 BE timestamp ms | u16 BE key length | key (utf8) | value
// The CRC covers the whole payload, so a torn write or a flipped bit is caught before anything
// reads the record.
import { crc32 } from 'node:zlib';

export const FILE_MAGIC = Buffer.from('RSLOG\u0000\u0002\n', 'latin1');
/** Format 1: frames without batch boundaries. Still read; converted to format 2 when a writer opens it. */
export const FILE_MAGIC_V1 = Buffer.from('RSLOG\u0000\u0001\n', 'latin1');
export const FRAME_HEADER_BYTES = 8;
const PAYLOAD_FIXED_BYTES = 10;
/** Far above any record the service writes (bodies are limited to kilobytes); a sanity bound when scanning. */
export const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** The largest key + value one frame holds. */
export const MAX_RECORD_BYTES = MAX_PAYLOAD_BYTES - PAYLOAD_FIXED_BYTES;

export interface FrameContent {
  readonly key: string;
  readonly value: Buffer;
  readonly timestampMs: number;
}

export function encodeFrame(content: FrameContent): Buffer {
  const keyBytes = Buffer.byteLength(content.key, 'utf8');
  const frame = Buffer.allocUnsafe(frameSize(keyBytes, content.value.length));
  writeFrame(frame, 0, content, keyBytes);
  return frame;
}

/** The bytes of a frame with a key of `keyBytes` UTF-8 bytes; a RangeError when the log cannot hold it. */
export function frameSize(keyBytes: number, valueBytes: number): number {
  const payloadBytes = PAYLOAD_FIXED_BYTES + keyBytes + valueBytes;
  // The scan at start refuses larger frames, so such a record must never be acknowledged.
  if (payloadBytes > MAX_PAYLOAD_BYTES || keyBytes > 0xffff) throw new RangeError(`record of ${payloadBytes} bytes is larger than the log's limit of ${MAX_PAYLOAD_BYTES}`);
  return FRAME_HEADER_BYTES + payloadBytes;
}

/** Writes the frame of `content` at `at` in `target` (which has room for it); returns its length. */
export function writeFrame(target: Buffer, at: number, { key, value, timestampMs }: FrameContent, keyBytes: number): number {
  const payloadBytes = PAYLOAD_FIXED_BYTES + keyBytes + value.length;
  target.writeUInt32BE(payloadBytes, at);
  target.writeDoubleBE(timestampMs, at + 8);
  target.writeUInt16BE(keyBytes, at + 16);
  target.write(key, at + 18, keyBytes, 'utf8');
  value.copy(target, at + 18 + keyBytes);
  target.writeUInt32BE(crc32(target.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + payloadBytes)), at + 4);
  return FRAME_HEADER_BYTES + payloadBytes;
}

export type FrameCheck =
  | { readonly kind: 'frame'; readonly bytes: number }
  | { readonly kind: 'incomplete'; readonly needBytes: number }
  | { readonly kind: 'bad'; readonly reason: string };

/**
 * Checks the frame that starts at `at` in `buffer`. `bufferIsFileEnd` says whether the buffer ends
 * where the file ends, so a frame running past it is torn rather than merely not read yet.
 */
export function checkFrame(buffer: Buffer, at: number, bufferIsFileEnd: boolean): FrameCheck {
  if (!bufferIsFileEnd) {
    const available = buffer.length - at;
    if (available < FRAME_HEADER_BYTES) return { kind: 'incomplete', needBytes: FRAME_HEADER_BYTES };
    const payloadBytes = buffer.readUInt32BE(at);
    const frameBytes = FRAME_HEADER_BYTES + payloadBytes;
    if (plausiblePayload(payloadBytes) && available < frameBytes) return { kind: 'incomplete', needBytes: frameBytes };
  }
  const bytes = frameBytesAt(buffer, at, buffer.length);
  return typeof bytes === 'number' ? { kind: 'frame', bytes } : { kind: 'bad', reason: bytes };
}

function plausiblePayload(payloadBytes: number): boolean {
  return payloadBytes >= PAYLOAD_FIXED_BYTES && payloadBytes <= MAX_PAYLOAD_BYTES;
}

/**
 * The length of the whole, valid frame at `at`, which must end by `end` (a batch's or the file's
 * end), or why it is not one. Allocates nothing but the CRC's view: the scan at open runs it on
 * every frame of the log.
 */
export function frameBytesAt(buffer: Buffer, at: number, end: number): number | string {
  if (end - at < FRAME_HEADER_BYTES) return 'frame header cut short';
  const payloadBytes = buffer.readUInt32BE(at);
  if (!plausiblePayload(payloadBytes)) return `implausible frame length ${payloadBytes}`;
  const frameBytes = FRAME_HEADER_BYTES + payloadBytes;
  if (end - at < frameBytes) return 'frame cut short';
  if (crc32(buffer.subarray(at + FRAME_HEADER_BYTES, at + frameBytes)) !== buffer.readUInt32BE(at + 4)) return 'CRC mismatch';
  if (PAYLOAD_FIXED_BYTES + buffer.readUInt16BE(at + FRAME_HEADER_BYTES + 8) > payloadBytes) return 'key longer than frame';
  return frameBytes;
}

/**
 * Decodes a frame that `checkFrame` accepted. The value is a view into `buffer`, not a copy: a
 * reader holding a record holds the chunk it was read with.
 */
export function decodeFrame(buffer: Buffer, at: number): FrameContent {
  const payloadBytes = buffer.readUInt32BE(at);
  const start = at + FRAME_HEADER_BYTES;
  const timestampMs = buffer.readDoubleBE(start);
  const keyBytes = buffer.readUInt16BE(start + 8);
  const key = buffer.toString('utf8', start + PAYLOAD_FIXED_BYTES, start + PAYLOAD_FIXED_BYTES + keyBytes);
  const value = buffer.subarray(start + PAYLOAD_FIXED_BYTES + keyBytes, start + payloadBytes);
  return { key, value, timestampMs };
}

/** A timestamp the writer could have written: whole milliseconds within the range of a Date. */
function plausibleTimestamp(buffer: Buffer, at: number): boolean {
  const timestampMs = buffer.readDoubleBE(at + FRAME_HEADER_BYTES);
  return Number.isInteger(timestampMs) && timestampMs >= 0 && timestampMs <= 8.64e15;
}

/**
 * Whether any valid frame starts anywhere in `buffer` (used to tell a torn tail from mid-log damage
 * in format 1, which has no batch marks). The CRC is computed only where the length and timestamp
 * are plausible, so garbage is searched in about linear time rather than a CRC at every offset.
 */
export function findValidFrame(buffer: Buffer): number | undefined {
  for (let at = 0; at + FRAME_HEADER_BYTES + PAYLOAD_FIXED_BYTES <= buffer.length; at += 1) {
    const payloadBytes = buffer.readUInt32BE(at);
    if (payloadBytes < PAYLOAD_FIXED_BYTES || at + FRAME_HEADER_BYTES + payloadBytes > buffer.length || !plausibleTimestamp(buffer, at)) continue;
    if (checkFrame(buffer, at, true).kind === 'frame') return at;
  }
  return undefined;
}
