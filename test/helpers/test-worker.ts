// One lane of `run-tests --lanes N`: a process that runs the test files its parent names on stdin,
// one line each, one file at a time, with uvu. What a file prints goes to stdout, followed by one
// line that starts with FILE_ENDED and carries the file's counts as JSON, so the parent can print
// each file's output in one piece and add up the counts. stdin's end ends the worker.
// A file still running after TEST_FILE_TIMEOUT_S seconds is reported `hung` (with what it holds
// open) and the worker exits: the parent stops the run, as a hung CI must fail in minutes.
// uvu is imported only after UVU_DEFER is set, so a file's suites queue up instead of running.
// Tests get uvu through uvu-guarded.ts (uvu-resolve.ts): an error a hook throws, which uvu itself
// drops, fails the file with its message, and so does a suite that ran fewer tests than it has.
import { register } from 'node:module';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { FILE_ENDED, type FileCounts } from './test-file-ended.js';
import { HOOK_ERRORS } from './uvu-resolve.js';

type SuiteRun = () => Promise<[errors: string, ran: number, skipped: number, total: number]>;
type Group = [name: string | null, ...runs: SuiteRun[]];
const uvuGlobals = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: Group[] };

/** What keeps the process alive, counted by kind: `TCPSocketWrap × 300, Timeout × 2`. */
function openResources(): string {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, count]) => (count === 1 ? kind : `${kind} × ${count}`)).join(', ');
}

/** The errors uvu-guarded.ts recorded since the last call, taken out of its list. */
function hookErrorsSinceLast(): string[] {
  const recorded = (globalThis as Record<symbol, unknown>)[HOOK_ERRORS];
  return Array.isArray(recorded) ? (recorded.splice(0) as string[]) : [];
}

/** A promise that rejects after `seconds` unless cleared first. */
function hangAfter(seconds: number): { hung: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${seconds} s`)), seconds * 1000);
  });
  return { hung, clear: () => clearTimeout(timer) };
}

/** Imports `path` (its suites queue up) and runs them; `name` is how the file is shown. */
async function runFile(path: string, name: string, timeoutS: number): Promise<FileCounts> {
  const started = performance.now();
  const index = uvuGlobals.UVU_QUEUE.length;
  uvuGlobals.UVU_INDEX = index;
  uvuGlobals.UVU_QUEUE.push([name]);
  process.stdout.write(`${name}\n`);
  let counts = { passed: 0, total: 0, skipped: 0, failed: false };
  const { hung, clear } = hangAfter(timeoutS);
  try {
    await Promise.race([import(pathToFileURL(path).href), hung]);
    const [, ...runs] = uvuGlobals.UVU_QUEUE[index] as Group;
    for (const run of runs) {
      const [errors, ran, skips, max] = await Promise.race([run(), hung]);
      const hookErrors = hookErrorsSinceLast();
      // uvu's skip count includes the tests an `.only` left out, which its total does not hold.
      const short = errors.length === 0 && hookErrors.length === 0 && ran + skips < max;
      counts = {
        passed: counts.passed + ran,
        total: counts.total + max,
        skipped: counts.skipped + skips,
        failed: counts.failed || errors.length > 0 || hookErrors.length > 0 || short,
      };
      if (errors.length > 0) process.stdout.write(`\n${errors}\n`);
      for (const error of hookErrors) process.stdout.write(`\nrun-tests: ${name}: ${error}\n`);
      if (short)
        process.stdout.write(`\nrun-tests: ${name}: a suite ran ${ran} of ${max} tests and reported no error\n`);
    }
  } catch (error) {
    const seconds = (performance.now() - started) / 1000;
    if (error instanceof Error && error.message.startsWith('still running after')) {
      process.stdout.write(
        `\nrun-tests: ${name} ${error.message} (TEST_FILE_TIMEOUT_S): counted as failed, the run stops here; open: ${openResources()}\n`,
      );
      return { file: name, ...counts, total: counts.total + 1, failed: true, hung: true, seconds };
    }
    // A file that cannot even be imported (or a suite that throws outside uvu) is one failure.
    process.stdout.write(
      `\nrun-tests: ${name} threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return { file: name, ...counts, total: counts.total + 1, failed: true, hung: false, seconds };
  } finally {
    clear();
  }
  return { file: name, ...counts, hung: false, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const timeoutS = Number(process.env.TEST_FILE_TIMEOUT_S ?? 600);
  uvuGlobals.UVU_DEFER = 1;
  uvuGlobals.UVU_QUEUE = [];
  register('./uvu-resolve.js', import.meta.url);
  await import('uvu');
  for await (const line of createInterface({ input: process.stdin })) {
    const [path, name] = JSON.parse(line) as [string, string];
    const counts = await runFile(path, name, timeoutS);
    process.stdout.write(` ${counts.seconds.toFixed(1)} s\n${FILE_ENDED}${JSON.stringify(counts)}\n`);
    if (counts.hung) process.exit(1);
  }
  // Whatever a suite left open (a server, a pooled keep-alive connection, a timer) must not hold the
  // run: one such kept a finished run alive for nine minutes. Name it, then exit.
  setTimeout(() => {
    process.stderr.write(`run-tests: a lane still had open 10 s after its last file: ${openResources()}; exiting\n`);
    process.exit();
  }, 10_000).unref();
}

await main();
