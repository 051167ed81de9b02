// Preloaded into the server by `make bench-start` (node --expose-gc --import gc-probe.js): on SIGUSR2
// it runs a full GC twice and writes process.memoryUsage() as JSON to BENCH_HEAP_FILE (through a
// rename, so the bench never reads half a file). It measures the real server's heap, read model and
// all, without anything in src/ knowing about the bench.
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env['BENCH_HEAP_FILE'];
const gc = (globalThis as { gc?: () => void }).gc;
if (file !== undefined && gc !== undefined) {
  process.on('SIGUSR2', () => {
    gc();
    gc();
    writeFileSync(`${file}.tmp`, JSON.stringify(process.memoryUsage()));
    renameSync(`${file}.tmp`, file);
  });
}
