// Writes the bytes of base64 (or base64url) text into a chunk, as `Buffer#write(text, at, bytes,
// 'base64')` does, by a loop: the fold writes two short ones for every sealed create it keeps (the
// key's id, a few characters, and the box, about 60), and at that length the call into the encoder
// costs more than the decoding. A million key ids and boxes in a loop took 420-590 ms through
// Buffer#write, 240-305 ms this way (Node 24 and 20); `reports replay` of a million sealed creates
// took about 7 % less CPU. Text with any character outside both alphabets (the fold's pattern
// admits none) goes to Buffer#write, which decides what it means; a test holds the two to the
// same bytes for any text of both alphabets, padded or not.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Each character's six bits, in base64 and base64url alike ('+' and '-' are 62, '/' and '_' 63); -1 for any other. */
const SIXTETS = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i += 1) values[ALPHABET.charCodeAt(i)] = i;
  values[0x2b] = 62; // +
  values[0x2d] = 62; // -
  values[0x2f] = 63; // /
  values[0x5f] = 63; // _
  return values;
})();

const PAD = 0x3d; // =

/** Writes at most `bytes` bytes of `text` decoded into `target` from `at`; returns how many it wrote. */
export function writeBase64(
  target: Buffer,
  at: number,
  text: string,
  bytes: number,
  encoding: 'base64' | 'base64url',
): number {
  const values = SIXTETS;
  let written = 0;
  let i = 0;
  // Four characters, three bytes, a step.
  for (; i + 4 <= text.length && written + 3 <= bytes; i += 4) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    const c2 = text.charCodeAt(i + 2);
    const c3 = text.charCodeAt(i + 3);
    if ((c0 | c1 | c2 | c3) > 0x7f) return target.write(text, at, bytes, encoding);
    const s0 = values[c0] as number;
    const s1 = values[c1] as number;
    const s2 = values[c2] as number;
    const s3 = values[c3] as number;
    // A padding or foreign character: the rest a sixtet at a time.
    if ((s0 | s1 | s2 | s3) < 0) break;
    const quad = (s0 << 18) | (s1 << 12) | (s2 << 6) | s3;
    target[at + written] = quad >> 16;
    target[at + written + 1] = (quad >> 8) & 0xff;
    target[at + written + 2] = quad & 0xff;
    written += 3;
  }
  let bits = 0;
  let pending = 0;
  for (; i < text.length && written < bytes; i += 1) {
    const code = text.charCodeAt(i);
    if (code === PAD) break;
    const sixtet = code < 128 ? (values[code] as number) : -1;
    if (sixtet < 0) return target.write(text, at, bytes, encoding);
    pending = ((pending << 6) | sixtet) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      target[at + written] = (pending >> bits) & 0xff;
      written += 1;
    }
  }
  return written;
}
