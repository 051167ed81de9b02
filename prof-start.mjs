import { writeHistory } from './dist/test/bench/history.js';
import { mkdtempSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
const dir = mkdtempSync('/tmp/profstart-');
let t = performance.now();
await writeHistory(dir, { firstId: 1000n, reports: 200000 });
console.log('history written', ((performance.now() - t) / 1000).toFixed(1), 's');
execFileSync(process.execPath, ['dist/src/cli/main.js', 'snapshot'], { env: { ...process.env, REPORTS_DATA_DIR: dir, REPORTS_TOKENS: 'x'.repeat(30) } });
for (const prof of [false, true]) {
  t = performance.now();
  const child = spawn(process.execPath, [...(prof ? ['--cpu-prof', '--cpu-prof-dir=/tmp/sprof'] : []), 'dist/src/main.js'], { env: { ...process.env, REPORTS_DATA_DIR: dir, REPORTS_TOKENS: 'x'.repeat(30), PORT: '18999', REPORTS_SNAPSHOT_EVERY: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.on('data', (d) => { for (const l of d.toString().split('\n')) if (l.includes('"msg"')) { const j = JSON.parse(l); console.log(((performance.now() - t)|0) + 'ms', j.msg); } });
  for (;;) { try { const r = await fetch('http://127.0.0.1:18999/readyz'); if (r.status === 200) break; } catch {} await new Promise((r) => setTimeout(r, 20)); }
  console.log('ready in', ((performance.now() - t) / 1000).toFixed(2), 's');
  await new Promise((r) => setTimeout(r, 1500));
  child.kill('SIGTERM'); await new Promise((r) => child.on('exit', r));
}
console.log(dir);
