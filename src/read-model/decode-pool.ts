// Decoding (JSON parse and schema check) is most of the cost of folding a long history, and it
// needs no read model: worker threads decode batches of records while the main thread folds the
// batches before them. Used for catch-ups (the server's start, `reports replay` and the like),
// not for the steady trickle of new records, which the main thread decodes as they come.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { LogRecord } from '../log/event-log.js';
import type { DecodeRequest, DecodeResponse } from './decode-worker.js';
import { foldInput, type FoldInput } from './fold-input.js';

export interface DecodePool {
  /** The fold inputs of `records`, in order. */
  decode(records: readonly LogRecord[]): Promise<FoldInput[]>;
  close(): Promise<void>;
}

interface Pending {
  readonly resolve: (inputs: FoldInput[]) => void;
  readonly reject: (error: Error) => void;
}

/** A fold of at least this many records is worth starting the threads for (tens of milliseconds). */
export const PARALLEL_FOLD_RECORDS = 20_000;

/** One worker per core, at least one: the main thread folds meanwhile. */
export function defaultDecodeThreads(): number {
  return Math.max(1, availableParallelism());
}

export function startDecodePool(threads = defaultDecodeThreads()): DecodePool {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let closed = false;
  const fail = (error: Error) => {
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  const workers = Array.from({ length: threads }, () => {
    const worker = new Worker(new URL('./decode-worker.js', import.meta.url));
    worker.on('message', ({ id, rows }: DecodeResponse) => {
      const waiting = pending.get(id);
      pending.delete(id);
      waiting?.resolve(rows.map(foldInput));
    });
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!closed) fail(new Error(`a decoding thread exited (code ${code})`));
    });
    return worker;
  });
  return {
    decode(records) {
      if (closed) return Promise.reject(new Error('the decode pool is closed'));
      let total = 0;
      for (const record of records) total += record.value.length;
      // The values are copied into one buffer that moves to the worker (the records' own buffers stay here).
      const bytes = new Uint8Array(total);
      const ends = new Uint32Array(records.length);
      let at = 0;
      records.forEach((record, i) => {
        bytes.set(record.value, at);
        at += record.value.length;
        ends[i] = at;
      });
      const id = nextId++;
      const worker = workers[id % workers.length] as Worker;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, bytes, ends } satisfies DecodeRequest, [bytes.buffer, ends.buffer]);
      });
    },
    async close() {
      closed = true;
      fail(new Error('the decode pool is closed'));
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
