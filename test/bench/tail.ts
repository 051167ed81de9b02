// `npm run bench:tail`: the tail under a large history alone (make bench-start runs it too): a
// history of BENCH_EVENTS (1,000,000) creates with small ids in a temporary directory, laid out and
// measured by history-tail.ts.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureTail, tailLines } from './history-tail.js';

const events = Number(process.env['BENCH_EVENTS'] ?? 1_000_000);
const durationS = Number(process.env['BENCH_TAIL_S'] ?? 60);
const root = mkdtempSync(join(tmpdir(), 'report-store-bench-tail-'));
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const progress = (line: string) => process.stderr.write(`bench-tail: ${line}\n`);

const cpuProfileDir = process.env['BENCH_CPU_PROF']?.trim() || undefined;
const result = await measureTail({
  dataDir: root,
  firstId: 1000n,
  token: randomBytes(24).toString('base64url'),
  durationS,
  events,
  progress,
  ...(cpuProfileDir === undefined ? {} : { cpuProfileDir }),
});
console.log(tailLines(result, durationS).join('\n'));
