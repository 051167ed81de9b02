// Runs every compiled `*.test.js` under dist/test in one process with uvu, and ends with the line
// `N passed, N failed` that CI reads. `node dist/test/run-tests.js PATTERN...` runs the files whose
// path contains a PATTERN; `--skip PATTERN` (repeatable) leaves out the files whose path contains
// it, which is how CI runs the suite without the slowest fault suites on the older Node versions.
// `--alongside PATTERN` runs the files matching it in a second run of this script, at the same time
// as the rest: the cluster fault suite mostly waits on its faults (its three brokers are its own),
// so it costs the run little time beside the others instead of three minutes after them. Its output
// is printed when it ends, and its counts are in the summary.
// A file still running after TEST_FILE_TIMEOUT_S (default 600) seconds ends the run: it is named
// with what it holds open, counted as failed, and the summary line is printed, so a hung test fails
// CI in minutes instead of holding it until CI's own time-out with nothing said.
// uvu is imported only after UVU_DEFER is set, so suites queue up here.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

type SuiteRun = () => Promise<[errors: string, ran: number, skipped: number, total: number]>;
type Group = [name: string | null, ...runs: SuiteRun[]];
const uvuGlobals = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: Group[] };

/**
 * The compiled tests under `dir` (dist/test) whose source is still in test/: tsc never deletes the
 * output of a source that was removed or moved, so after a pull a stale copy would run (and fail
 * on an import that no longer exists) until someone cleans dist/.
 */
async function testFiles(dir: string): Promise<string[]> {
  const sources = join(dir, '..', '..', 'test');
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.js'))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => existsSync(join(sources, relative(dir, file)).replace(/\.js$/, '.ts')))
    .sort();
}

interface SideRun {
  readonly passed: number;
  readonly failed: number;
  readonly output: string;
}

/** This script on `patterns` in a child process (coverage and the broker's variables inherited); its output kept for the end. */
function runAlongside(patterns: readonly string[]): Promise<SideRun> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...patterns], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    child.on('close', (code) => {
      const summary = /^(\d+) passed, (\d+) failed/m.exec(output);
      const passed = Number(summary?.[1] ?? 0);
      // A run that failed without a failed test (or printed no summary) counts as one failure.
      const failed = Number(summary?.[2] ?? 0) || (code === 0 && summary ? 0 : 1);
      resolve({ passed, failed, output });
    });
  });
}

/** What keeps the process alive, counted by kind: `TCPSocketWrap × 300, Timeout × 2`. */
function openResources(): string {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, count]) => (count === 1 ? kind : `${kind} × ${count}`)).join(', ');
}

/** A promise that rejects after `seconds` unless cleared first. */
function hangAfter(seconds: number): { hung: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${seconds} s`)), seconds * 1000);
  });
  return { hung, clear: () => clearTimeout(timer) };
}

async function main(): Promise<void> {
  const fileTimeoutS = Number(process.env.TEST_FILE_TIMEOUT_S ?? 600);
  if (!(fileTimeoutS > 0)) throw new Error(`TEST_FILE_TIMEOUT_S must be a positive number of seconds, not ${process.env.TEST_FILE_TIMEOUT_S}`);
  const root = dirname(fileURLToPath(import.meta.url));
  const { values, positionals: patterns } = parseArgs({ options: { skip: { type: 'string', multiple: true, default: [] }, alongside: { type: 'string', multiple: true, default: [] } }, allowPositionals: true });
  const skipped = [...values.skip, ...values.alongside];
  const all = await testFiles(root);
  const files = all.filter((file) => (patterns.length === 0 || patterns.some((p) => file.includes(p))) && !skipped.some((p) => file.includes(p)));
  const besideFiles = values.alongside.length === 0 ? [] : all.filter((file) => (patterns.length === 0 || patterns.some((p) => file.includes(p))) && values.alongside.some((p) => file.includes(p)) && !values.skip.some((p) => file.includes(p)));
  const beside = besideFiles.length === 0 ? undefined : runAlongside(besideFiles.map((file) => relative(root, file)));
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
    const { hung, clear } = hangAfter(fileTimeoutS);
    for (const run of runs) {
      const outcome = await Promise.race([run(), hung]).catch((error: Error) => error);
      if (outcome instanceof Error) {
        process.stdout.write(`\nrun-tests: ${name ?? 'a file'} ${outcome.message} (TEST_FILE_TIMEOUT_S): counted as failed, the run stops here; open: ${openResources()}\n`);
        process.stdout.write(`${passed} passed, ${total - passed - skippedTests + 1} failed\n`);
        process.exit(1);
      }
      const [errors, ran, skips, max] = outcome;
      total += max;
      passed += ran;
      skippedTests += skips;
      if (errors.length > 0) {
        fileFailed = true;
        process.stdout.write(`\n${errors}\n`);
      }
    }
    clear();
    if (fileFailed) failedFiles += 1;
    // Per file, so the slow suites are easy to find (and to name in --skip).
    process.stdout.write(` ${((Date.now() - fileStarted) / 1000).toFixed(1)} s\n`);
  }
  let failed = total - passed - skippedTests;
  const left = values.skip.length > 0 ? ` (left out: files matching ${values.skip.join(', ')})` : '';
  process.stdout.write(`\n${files.length} files, ${((Date.now() - started) / 1000).toFixed(1)} s${failedFiles ? `, failures in ${failedFiles} files` : ''}${left}\n`);
  if (beside) {
    const side = await beside;
    process.stdout.write(`\n--- alongside (${besideFiles.length} files, ended ${((Date.now() - started) / 1000).toFixed(1)} s after the run started) ---\n${side.output}--- end of the run alongside ---\n\n`);
    passed += side.passed;
    failed += side.failed;
  }
  process.stdout.write(`${passed} passed, ${failed} failed${skippedTests ? `, ${skippedTests} skipped` : ''}\n`);
  process.exitCode = failed > 0 || files.length + besideFiles.length === 0 ? 1 : 0;
  // Whatever a suite left open (a server, a pooled keep-alive connection, a timer) must not hold the
  // run: one such kept a finished run alive for nine minutes. Name it, then exit with the verdict.
  setTimeout(() => {
    process.stderr.write(`run-tests: still open 10 s after the last suite: ${openResources()}; exiting\n`);
    process.exit();
  }, 10_000).unref();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
