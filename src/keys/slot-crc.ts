// CRC-32 (the one node:zlib's crc32 computes: IEEE 802.3, reflected, as zip and PNG use) of a range
// of bytes, for keys.db's slots. A slot's 68 checked bytes are too few for zlib's native code to pay
// for its call and the view it needs: over a million slots (`reports replay` and every read of the
// whole table check each one), zlib took 331-395 ms with its views, this 128-134 ms (Node 24 and 20,
// the same sums; a test holds it to zlib's on every length and offset). Longer inputs (the log's
// frames) stay with zlib. Four tables, four bytes a step ("slicing by 4").
const POLYNOMIAL = 0xedb88320;

const TABLES = (() => {
  const tables = new Int32Array(4 * 256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1;
    tables[n] = c;
  }
  for (let n = 0; n < 256; n += 1) {
    let c = tables[n] as number;
    for (let t = 1; t < 4; t += 1) {
      c = (tables[c & 0xff] as number) ^ (c >>> 8);
      tables[t * 256 + n] = c;
    }
  }
  return tables;
})();

/** CRC-32 of `bytes[start, end)`, as node:zlib's `crc32(bytes.subarray(start, end))` gives it. */
export function crc32Of(bytes: Uint8Array, start: number, end: number): number {
  const t = TABLES;
  let c = -1;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    c ^=
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    c =
      (t[768 + (c & 0xff)] as number) ^
      (t[512 + ((c >>> 8) & 0xff)] as number) ^
      (t[256 + ((c >>> 16) & 0xff)] as number) ^
      (t[c >>> 24] as number);
  }
  for (; i < end; i += 1) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
