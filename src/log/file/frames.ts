// The on-disk format of the embedded log (format 2). A file starts with an 8-byte magic that names
// the format; then batches of frames (batches.ts). A frame is:
//   u32 BE payload length | u32 BE CRC-32 of the payload | payload
//   payload = f64 BE timestamp ms | u16 BE key length | key (utf8) | value
// The CRC covers the whole payload, so a torn write or a flipped bit is caught before anything
// reads the record.
import { crc32 } from 'node:zlib';

export const FILE_MAGIC = Buffer.from('RSLOG\u0000\u0002\n', 'latin1');
/** The one format this version reads and writes: the magic's seventh byte. */
export const FILE_FORMAT = 2;
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
  if (payloadBytes > MAX_PAYLOAD_BYTES || keyBytes > 0xffff)
    throw new RangeError(`record of ${payloadBytes} bytes is larger than the log's limit of ${MAX_PAYLOAD_BYTES}`);
  return FRAME_HEADER_BYTES + payloadBytes;
}

/** Writes the frame of `content` at `at` in `target` (which has room for it); returns its length. */
export function writeFrame(
  target: Buffer,
  at: number,
  { key, value, timestampMs }: FrameContent,
  keyBytes: number,
): number {
  const payloadBytes = PAYLOAD_FIXED_BYTES + keyBytes + value.length;
  target.writeUInt32BE(payloadBytes, at);
  target.writeDoubleBE(timestampMs, at + 8);
  target.writeUInt16BE(keyBytes, at + 16);
  target.write(key, at + 18, keyBytes, 'utf8');
  value.copy(target, at + 18 + keyBytes);
  target.writeUInt32BE(crc32(target.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + payloadBytes)), at + 4);
  return FRAME_HEADER_BYTES + payloadBytes;
}

/** The format a whole magic names (`RSLOG\0<format>\n`), whichever it is; undefined for bytes that are no log's magic. */
export function magicFormat(head: Buffer): number | undefined {
  const named =
    head.length === FILE_MAGIC.length &&
    head.subarray(0, 6).equals(FILE_MAGIC.subarray(0, 6)) &&
    head[7] === FILE_MAGIC[7];
  return named ? head[6] : undefined;
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
  if (crc32(buffer.subarray(at + FRAME_HEADER_BYTES, at + frameBytes)) !== buffer.readUInt32BE(at + 4))
    return 'CRC mismatch';
  if (PAYLOAD_FIXED_BYTES + buffer.readUInt16BE(at + FRAME_HEADER_BYTES + 8) > payloadBytes)
    return 'key longer than frame';
  return frameBytes;
}

/** Where the parts of the frame at `at` lie in `buffer`, for a reader that decodes only some frames. */
export interface FrameParts {
  readonly timestampMs: number;
  readonly keyStart: number;
  readonly keyEnd: number;
  /** The value lies from keyEnd to here. */
  readonly end: number;
}

/** The parts of a frame the log's scan accepted; a RangeError if its key runs past it (the file changed under the reader). */
export function frameParts(buffer: Buffer, at: number): FrameParts {
  const start = at + FRAME_HEADER_BYTES;
  const end = start + buffer.readUInt32BE(at);
  const keyStart = start + PAYLOAD_FIXED_BYTES;
  const keyEnd = keyStart + buffer.readUInt16BE(start + 8);
  if (keyEnd > end) throw new RangeError('key longer than its frame');
  return { timestampMs: buffer.readDoubleBE(start), keyStart, keyEnd, end };
}

/**
 * Decodes a frame that `frameBytesAt` accepted. The value is a view into `buffer`, not a copy: a
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
