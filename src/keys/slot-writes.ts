// One group commit's slots made durable. A group of one run (puts, which take the slots at the end
// of the file, or destroys of slots next to each other) is one write through an O_DSYNC descriptor
// (durable-write.ts, as the event log's batches): one system call and one trip through libuv's
// thread pool. Runs scattered over the file are written at once through the plain descriptor, then
// one fdatasync for all of them: under O_DSYNC each run would wait for its own flush to the disk.
// Measured on the development machine, busy with other work (2026-11-26,
// test/bench/key-store-sync.ts, three runs, medians): 30 destroys scattered over 100,000 keys took
// 1.3-1.5 ms written at once then fdatasynced, 1.9-2.3 ms written at once through O_DSYNC and
// 5.7-7.0 ms in turn through O_DSYNC. A single run costs about the same latency either way, but
// the trip through the pool saved is CPU on the event loop's core, once a group commit of the log
// (docs/performance.md). The callback API of node:fs, as the log's.
import { fdatasync, write } from 'node:fs';
import type { DurableFile } from '../data-dir/durable-write.js';
import { slotPosition } from './key-slots.js';
import type { SlotRun } from './slot-plan.js';

/** keys.db open twice for writing: a plain descriptor, and one whose writes are durable when they resolve. */
export interface SlotFile {
  readonly fd: number;
  readonly durable: DurableFile;
}

/** Writes every run at its slot, durably; resolves once all of it is on disk. */
export function writeRunsDurably(file: SlotFile, runs: readonly SlotRun[]): Promise<void> {
  const [only] = runs;
  if (runs.length === 1 && only !== undefined) return file.durable.write(only.bytes, slotPosition(only.slot));
  return writeThenSync(file.fd, runs);
}

/** Every run written at once through `fd`, then one fdatasync. */
export async function writeThenSync(fd: number, runs: readonly SlotRun[]): Promise<void> {
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
