// Preloaded into the `reports` CLI by `make bench-start` (node --import cpu-probe.js): at exit it
// writes the process's CPU seconds (process.cpuUsage(): every thread, the folding threads included)
// to BENCH_CPU_FILE. On a shared machine, CPU time moves far less with other loads than wall time.
import { writeFileSync } from 'node:fs';

const file = process.env['BENCH_CPU_FILE'];
if (file !== undefined) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, String((user + system) / 1e6));
  });
}
