// One positional read of a file, for the scans that look at the log in pieces (the start-up scan,
// the search for a whole batch after damage) and for keys.db's slots. Through node:fs's callback
// API, as the writes (durable-write.ts): FileHandle.read's promise costs about half as much CPU
// again a read (measured on Node 24 with 64 reads in flight: 12-16 against 21-31 µs), and an
// identical retry or a GET of a report whose key is no longer in memory makes one read each.
import { read } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Up to `length` bytes from `position`: fewer where the file ends first. */
export function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  return new Promise((resolve, reject) => {
    const from = (filled: number): void => {
      if (filled === length) return resolve(buffer);
      read(file.fd, buffer, filled, length - filled, position + filled, (error, bytesRead) => {
        if (error) return reject(error);
        // The end of the file: what was read so far.
        if (bytesRead === 0) return resolve(buffer.subarray(0, filled));
        from(filled + bytesRead);
      });
    };
    from(0);
  });
}
