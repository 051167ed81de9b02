// Whether a snapshot file's checksum matches its body. The file is hashed on a thread of its own
// while the main thread reads it into the model (file-bytes-in.ts), so a start costs about the
// longer of the two rather than both: SHA-256 of a 846 MB snapshot took 0.7 s here, reading it 0.45 s.
// A small file is hashed on the calling thread (a thread costs more than hashing a few MB).
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { readFully } from './file-bytes-in.js';

const PIECE_BYTES = 4 << 20;
/** Below this, hashed on the calling thread. */
const THREAD_FROM_BYTES = 64 << 20;

export interface ChecksumRequest {
  readonly fd: number;
  /** Bytes of the body (the checksum follows them). */
  readonly bodyBytes: number;
  readonly checksumBytes: number;
}

/** Whether the SHA-256 of the first `bodyBytes` of the open file `fd` is the `checksumBytes` after them. */
export function checksumMatchesNow({ fd, bodyBytes, checksumBytes }: ChecksumRequest): boolean {
  const hash = createHash('sha256');
  const piece = Buffer.allocUnsafe(Math.min(PIECE_BYTES, Math.max(bodyBytes, checksumBytes)));
  for (let at = 0; at < bodyBytes; at += piece.length) {
    const length = Math.min(piece.length, bodyBytes - at);
    readFully(fd, piece, 0, length, at);
    hash.update(piece.subarray(0, length));
  }
  readFully(fd, piece, 0, checksumBytes, bodyBytes);
  return hash.digest().equals(piece.subarray(0, checksumBytes));
}

/**
 * checksumMatchesNow: at once for a small file, on a thread of its own for a large one (the
 * descriptor must stay open until the promise settles).
 */
export function checksumMatches(request: ChecksumRequest): boolean | Promise<boolean> {
  if (request.bodyBytes < THREAD_FROM_BYTES) return checksumMatchesNow(request);
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./checksum-worker.js', import.meta.url), { workerData: request });
    worker.once('message', (matches: boolean) => resolve(matches));
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`the checksum thread stopped before it answered (exit code ${code})`)),
    );
  });
}
