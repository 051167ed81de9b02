// One group commit's slots made durable: every run written (at once, through libuv's thread pool),
// then one fdatasync for all of them. Not O_DSYNC as the event log's writes are (durable-write.ts):
// the log writes one run per commit, where O_DSYNC saves a trip through the thread pool, but the
// key store's destroys are scattered over the file, one run each, and under O_DSYNC each run waits
// for its own flush to the disk. Measured on the development machine (test/bench/key-store-sync.ts):
// 30 scattered destroys took 2.5 ms with O_DSYNC and 1.2 ms written then fdatasynced once; a run of
// 1 to 300 puts costs the same either way (0.17-0.22 ms). The callback API of node:fs, as the log's.
import { fdatasync, write } from 'node:fs';
import { slotPosition } from './key-slots.js';
import type { SlotRun } from './slot-plan.js';

/** Writes every run at its slot, then syncs the file's data; resolves once all of it is on disk. */
export async function writeRunsDurably(fd: number, runs: readonly SlotRun[]): Promise<void> {
  const outcomes = await Promise.allSettled(runs.map(({ slot, bytes }) => writeAll(fd, bytes, slotPosition(slot))));
  // Every write has settled before the failure is reported, so none is left running on a file
  // the caller may close.
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

/** write(2) may take less than asked (a full disk, a signal): the rest follows. */
function writeAll(fd: number, bytes: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const from = (written: number): void => {
      if (written === bytes.length) return resolve();
      write(fd, bytes, written, bytes.length - written, position + written, (error, bytesWritten) => {
        if (error) return reject(error);
        if (bytesWritten === 0) return reject(new Error('the disk accepted no bytes'));
        from(written + bytesWritten);
      });
    };
    from(0);
  });
}
