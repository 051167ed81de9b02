// Runs every compiled `*.test.js` under dist/test with uvu, in lanes (worker processes, each running
// one file at a time: test/helpers/test-worker.ts), and ends with the line `N passed, N failed` that
// CI reads. Most suites wait (on a broker, a child server, a time-out) far more than they compute, so
// on two cores two lanes take about two thirds of the time of one (npm test asks for three); `--lanes N` (or TEST_LANES) sets how many,
// `--lanes 1` runs the files one after another as before. Files are handed out longest first, by the
// times of the last run (kept in .cache/test-times.json), and each file's output is printed in one
// piece when it ends, with its time, so the slow suites are easy to find.
// `node dist/test/run-tests.js PATTERN...` runs the files whose path contains a PATTERN; `--skip
// PATTERN` (repeatable) leaves out the files whose path contains it, and `--skip-from FILE` those
// whose path starts with one of its lines (`#` starts a comment): how CI runs the suite on the older Node versions without
// the suites whose subject is not the runtime (test/compat-skips.txt).
// `--alongside PATTERN` runs the files matching it in one lane of their own, beside the others: the
// cluster fault suite mostly waits on its faults (its three brokers are its own), so it costs the run
// little time beside the others instead of minutes after them. `--alone PATTERN` runs the files
// matching it one at a time after the lanes are done: the few whose time bounds need the cores (a
// thousand hostile connections served within the header time-out failed beside two busy lanes).
// A file still running after TEST_FILE_TIMEOUT_S (default 600) seconds ends the run: it is named
// with what it holds open, counted as failed, and the summary line is printed, so a hung test fails
// CI in minutes instead of holding it until CI's own time-out with nothing said. The files run
// alongside have TEST_ALONGSIDE_TIMEOUT_S (default twice TEST_FILE_TIMEOUT_S): the cluster fault
// suite took 481 s of a run's 588 on the development machine, and a CI machine more loaded than it
// reached 600 s, ending the whole run as hung while no file was.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runLanes, type Tally } from './helpers/test-lanes.js';

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

/** The seconds each file took in the last runs (a file not run since keeps its old time). */
async function lastTimes(path: string): Promise<Record<string, number>> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function lanesFrom(value: string | undefined): number {
  const lanes = Number(value ?? 2);
  if (!Number.isInteger(lanes) || lanes < 1)
    throw new Error(`--lanes (or TEST_LANES) must be a whole number of lanes, 1 or more, not ${value}`);
  return lanes;
}

/** The path prefixes a skip file names: a line each, `#` to the end of a line a comment. */
async function skipsIn(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '');
}

async function main(): Promise<void> {
  const fileTimeoutS = Number(process.env.TEST_FILE_TIMEOUT_S ?? 600);
  if (!(fileTimeoutS > 0))
    throw new Error(`TEST_FILE_TIMEOUT_S must be a positive number of seconds, not ${process.env.TEST_FILE_TIMEOUT_S}`);
  const alongsideTimeoutS = Number(process.env.TEST_ALONGSIDE_TIMEOUT_S ?? 2 * fileTimeoutS);
  if (!(alongsideTimeoutS > 0))
    throw new Error(
      `TEST_ALONGSIDE_TIMEOUT_S must be a positive number of seconds, not ${process.env.TEST_ALONGSIDE_TIMEOUT_S}`,
    );
  const root = dirname(fileURLToPath(import.meta.url));
  const { values, positionals: patterns } = parseArgs({
    options: {
      skip: { type: 'string', multiple: true, default: [] },
      'skip-from': { type: 'string', multiple: true, default: [] },
      alongside: { type: 'string', multiple: true, default: [] },
      alone: { type: 'string', multiple: true, default: [] },
      lanes: { type: 'string' },
    },
    allowPositionals: true,
  });
  const lanes = lanesFrom(values.lanes ?? process.env.TEST_LANES);
  const listed = (await Promise.all(values['skip-from'].map(skipsIn))).flat();
  const skipped = (path: string) => values.skip.some((p) => path.includes(p)) || listed.some((p) => path.startsWith(p));
  const skips = [...values.skip, ...listed];
  const name = (file: string) => relative(root, file);
  // Patterns match the path under dist/test, not the checkout's own path (a checkout in wt-chaos/).
  const chosen = (await testFiles(root)).filter(
    (file) => (patterns.length === 0 || patterns.some((p) => name(file).includes(p))) && !skipped(name(file)),
  );
  const beside = chosen.filter((file) => values.alongside.some((p) => name(file).includes(p)));
  const alone = chosen.filter((file) => !beside.includes(file) && values.alone.some((p) => name(file).includes(p)));
  const timesPath = join(root, '..', '..', '.cache', 'test-times.json');
  const times = await lastTimes(timesPath);
  const longestFirst = (files: string[]) =>
    files.map((file) => ({ path: file, name: name(file) })).sort((a, b) => (times[b.name] ?? 0) - (times[a.name] ?? 0));
  const started = performance.now();
  const tally: Tally = await runLanes({
    worker: join(root, 'helpers', 'test-worker.js'),
    fileTimeoutS,
    alongsideTimeoutS,
    files: longestFirst(chosen.filter((file) => !beside.includes(file) && !alone.includes(file))),
    lanes,
    alongside: longestFirst(beside),
    alone: longestFirst(alone),
    write: (text) => process.stdout.write(text),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  for (const [file, took] of tally.times) times[file] = Math.round(took * 10) / 10;
  await mkdir(dirname(timesPath), { recursive: true });
  await writeFile(timesPath, `${JSON.stringify(times, null, 1)}\n`);
  // A failed file counts at least once, whatever its counts say (uvu's total leaves skipped tests out).
  const failed = Math.max(tally.total - tally.passed - tally.skipped, tally.failedFiles.length);
  const left = skips.length > 0 ? ` (left out: files matching ${skips.join(', ')})` : '';
  const failures =
    tally.failedFiles.length > 0
      ? `; failures in ${tally.failedFiles.length} files: ${tally.failedFiles.join(', ')}`
      : '';
  process.stdout.write(
    `\n${tally.times.size} file${tally.times.size === 1 ? '' : 's'} in ${lanes} lane${lanes === 1 ? '' : 's'}${beside.length > 0 ? ` (and ${beside.length} alongside)` : ''}${alone.length > 0 ? ` (then ${alone.length} alone)` : ''}, ${seconds} s${failures}${left}\n`,
  );
  if (tally.stopped) process.stdout.write(`run-tests: the run stopped early: ${tally.stopped}\n`);
  process.stdout.write(
    `${tally.passed} passed, ${failed} failed${tally.skipped ? `, ${tally.skipped} skipped` : ''}\n`,
  );
  process.exit(failed > 0 || tally.times.size === 0 || tally.stopped ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
