// A disk that stops answering, for tests of what the key store does meanwhile: every thread of
// libuv's pool (UV_THREADPOOL_SIZE, 4 unless set) is held in an open(2) of a FIFO nobody writes to,
// so every file system call queued after them waits, deterministically, until `release`.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export interface HeldThreadPool {
  release(): Promise<void>;
}

export function holdThreadPool(dir: string): HeldThreadPool {
  const threads = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
  const fifos = Array.from({ length: threads }, (_, i) => join(dir, `held-thread-${i}.fifo`));
  for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
  // Queued first, so each takes a thread before anything queued after it.
  const readers: Promise<FileHandle>[] = fifos.map((fifo) => open(fifo, constants.O_RDONLY));
  return {
    async release() {
      // Each reader is blocked in its open on a thread of the pool: a writer's open meets it at once.
      for (const fifo of fifos) closeSync(openSync(fifo, constants.O_WRONLY));
      for (const reader of await Promise.all(readers)) await reader.close();
    },
  };
}
