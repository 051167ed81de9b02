// Runs every compiled `*.test.js` under dist/test in one process with uvu, and ends with the line
// `N passed, N failed` that CI reads. `node dist/test/run-tests.js PATTERN...` runs the files whose
// path contains a PATTERN; `--skip PATTERN` (repeatable) leaves out the files whose path contains
// it, which is how CI runs the suite without the slowest fault suites on the older Node versions.
// uvu is imported only after UVU_DEFER is set, so suites queue up here.
import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

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
  const { values, positionals: patterns } = parseArgs({ options: { skip: { type: 'string', multiple: true, default: [] } }, allowPositionals: true });
  const skipped = values.skip;
  const files = (await testFiles(root)).filter((file) => (patterns.length === 0 || patterns.some((p) => file.includes(p))) && !skipped.some((p) => file.includes(p)));
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
  let skippedTests = 0;
  let failedFiles = 0;
  const started = Date.now();
  for (const [name, ...runs] of uvuGlobals.UVU_QUEUE) {
    process.stdout.write(`${name ?? ''}\n`);
    const fileStarted = Date.now();
    let fileFailed = false;
    for (const run of runs) {
      const [errors, ran, skips, max] = await run();
      total += max;
      passed += ran;
      skippedTests += skips;
      if (errors.length > 0) {
        fileFailed = true;
        process.stdout.write(`\n${errors}\n`);
      }
    }
    if (fileFailed) failedFiles += 1;
    // Per file, so the slow suites are easy to find (and to name in --skip).
    process.stdout.write(` ${((Date.now() - fileStarted) / 1000).toFixed(1)} s\n`);
  }
  const failed = total - passed - skippedTests;
  const left = skipped.length > 0 ? ` (left out: files matching ${skipped.join(', ')})` : '';
  process.stdout.write(`\n${files.length} files, ${((Date.now() - started) / 1000).toFixed(1)} s${failedFiles ? `, failures in ${failedFiles} files` : ''}${left}\n`);
  process.stdout.write(`${passed} passed, ${failed} failed${skippedTests ? `, ${skippedTests} skipped` : ''}\n`);
  process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
  // Whatever a suite left open (a server, a pooled keep-alive connection, a timer) must not hold the
  // run: one such kept a finished run alive for nine minutes. Name it, then exit with the verdict.
  setTimeout(() => {
    process.stderr.write(`run-tests: still open 10 s after the last suite: ${process.getActiveResourcesInfo().join(', ')}; exiting\n`);
    process.exit();
  }, 10_000).unref();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
