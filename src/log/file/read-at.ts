// One positional read of the log file, for the scans that look at it in pieces (the start-up scan,
// the search for a whole batch after damage).
import type { FileHandle } from 'node:fs/promises';

/** Up to `length` bytes from `position`: fewer where the file ends first. */
export async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}
