// One group commit's slots made durable: every run written (at once, through libuv's thread pool),
// then one fdatasync for all of them. Not O_DSYNC as the event log's writes are (durable-write.ts):
// the log writes one run per commit, where O_DSYNC saves a trip through the thread pool, but the
// key store's destroys are scattered over the file, one run each, and under O_DSYNC each run waits
// for its own flush to the disk. Measured on the development machine, busy with other work
// (2026-11-26, test/bench/key-store-sync.ts, three runs, medians): 30 destroys scattered over
// 100,000 keys took 1.3-1.5 ms written at once then fdatasynced, 1.9-2.3 ms written at once through
// O_DSYNC and 5.7-7.0 ms in turn through O_DSYNC; one run at the end costs about the same either
// way (0.25-0.35 ms for 30 or 300 slots, O_DSYNC 0.03-0.06 ms less), not worth a second descriptor.
// The callback API of node:fs, as the log's.
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
