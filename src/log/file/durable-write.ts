// One group commit's write(2) calls and fdatasync(2), on the file's descriptor through node:fs's
// callback API: the FileHandle promise methods cost noticeably more per call, and the file log
// makes two of these calls for every batch it acknowledges.
import { fdatasync, write } from 'node:fs';

/** Writes all of `bytes` at `position` (write(2) may take less than asked: a full disk, a signal), then fdatasyncs. */
export function writeDurably(fd: number, bytes: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sync = () => fdatasync(fd, (error) => (error ? reject(error) : resolve()));
    const from = (written: number): void => {
      if (written === bytes.length) return sync();
      write(fd, bytes, written, bytes.length - written, position + written, (error, bytesWritten) => {
        if (error) return reject(error);
        if (bytesWritten === 0) return reject(new Error('the disk accepted no bytes'));
        from(written + bytesWritten);
      });
    };
    from(0);
  });
}
