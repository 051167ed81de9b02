// Reading a snapshot file at start: its magic bytes first, then its body read straight into the
// model (file-bytes-in.ts) while another thread checks its checksum (file-checksum.ts). Nothing
// read is trusted until the checksum matches, and a file whose checksum does not match is refused
// as such, whatever its body held. Until then the body is read as untrusted bytes: every length in
// it is checked against the bytes left before anything is allocated for it.
import { openRegularFile } from '../regular-file.js';
import { FileBytesIn, readFully } from './file-bytes-in.js';
import { checksumMatches } from './file-checksum.js';
import { CHECKSUM_BYTES, decodeBody, magicProblem, SNAPSHOT_MAGIC, type Decoded } from './snapshot-format.js';

/** The snapshot the regular file `path` holds, or why it holds none; throws when it cannot be read. */
export async function readSnapshotFile(path: string): Promise<Decoded> {
  const file = await openRegularFile(path);
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(Math.min(size, SNAPSHOT_MAGIC.length));
    readFully(file.fd, head, 0, head.length, 0);
    const problem = magicProblem(head, size);
    if (problem !== undefined) return { ok: false, reason: problem };
    const bodyBytes = size - CHECKSUM_BYTES;
    const checked = checksumMatches({ fd: file.fd, bodyBytes, checksumBytes: CHECKSUM_BYTES });
    // A small file's checksum is known before its body is read: one that does not match is not read.
    if (checked === false) return { ok: false, reason: 'checksum mismatch' };
    const intact = Promise.resolve(checked);
    let decoded: Decoded;
    try {
      decoded = decodeBody(new FileBytesIn(file.fd, SNAPSHOT_MAGIC.length, bodyBytes));
    } finally {
      // The descriptor stays open until the checksum's thread is done with it.
      await intact.catch(() => undefined);
    }
    return (await intact) ? decoded : { ok: false, reason: 'checksum mismatch' };
  } finally {
    await file.close();
  }
}
