// What sealing costs a create by itself, on this machine: the content's bytes, their SHA-256 digest
// (kept with the key) and the AES-256-GCM box under a fresh key, in the form the event carries
// (base64), with nothing else of a create around it. The floor under the erasure work's cost: no
// design of the key store can take a create below it (docs/performance.md).
//
//   npm run bench:seal        (BENCH_SEALS: how many, 200,000 unless set)
import { randomBytes } from 'node:crypto';
import { contentBytes, digestOfBytes, sealBytes } from '../../projections/sealing.js';

const count = Number(process.env['BENCH_SEALS'] ?? 200_000);
const report = { name: 'Performance review — J. Smith', tag: 'hr-2026' };
// Keys drawn beforehand: the key store draws them from a pool of random bytes too.
const secrets = Array.from({ length: 1024 }, () => randomBytes(32));

function seal(times: number): void {
  for (let i = 0; i < times; i += 1) {
    const bytes = contentBytes(report);
    digestOfBytes(bytes);
    sealBytes(bytes, secrets[i % secrets.length] as Buffer, { id: String(i), expectedversion: 0 }).toString('base64');
  }
}

seal(20_000);
for (let run = 1; run <= 3; run += 1) {
  const cpu = process.cpuUsage();
  const startedMs = performance.now();
  seal(count);
  const { user, system } = process.cpuUsage(cpu);
  console.log(
    `run ${run}: ${count} seals, ${((user + system) / count).toFixed(2)} µs of CPU and ${(((performance.now() - startedMs) * 1000) / count).toFixed(2)} µs of wall time a create`,
  );
}
