// Runs every compiled `*.test.js` under dist/test in one process with uvu, and ends with the line
// `N passed, N failed` that CI reads. `node dist/test/run-tests.js PATTERN` runs the files whose
// path contains PATTERN. uvu is imported only after UVU_DEFER is set, so suites queue up here.
import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type SuiteRun = () => Promise<[errors: string, ran: number, skipped: number, total: number]>;
type Group = [name: string | null, ...runs: SuiteRun[]];
const uvuGlobals = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: Group[] };

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.js'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function main(): Promise<void> {
  const root = dirname(fileURLToPath(import.meta.url));
  const patterns = process.argv.slice(2);
  const files = (await testFiles(root)).filter((file) => patterns.length === 0 || patterns.some((p) => file.includes(p)));
  uvuGlobals.UVU_DEFER = 1;
  uvuGlobals.UVU_QUEUE = [];
  await import('uvu');
  for (const [index, file] of files.entries()) {
    uvuGlobals.UVU_INDEX = index;
    uvuGlobals.UVU_QUEUE.push([relative(root, file)]);
    await import(pathToFileURL(file).href);
  }
  let total = 0;
  let passed = 0;
  let skipped = 0;
  let failedFiles = 0;
  const started = Date.now();
  for (const [name, ...runs] of uvuGlobals.UVU_QUEUE) {
    process.stdout.write(`${name ?? ''}\n`);
    let fileFailed = false;
    for (const run of runs) {
      const [errors, ran, skips, max] = await run();
      total += max;
      passed += ran;
      skipped += skips;
      if (errors.length > 0) {
        fileFailed = true;
        process.stdout.write(`\n${errors}\n`);
      }
    }
    if (fileFailed) failedFiles += 1;
    process.stdout.write('\n');
  }
  const failed = total - passed - skipped;
  process.stdout.write(`\n${files.length} files, ${((Date.now() - started) / 1000).toFixed(1)} s${failedFiles ? `, failures in ${failedFiles} files` : ''}\n`);
  process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
