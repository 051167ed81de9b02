// run-tests' lanes (test/helpers/test-lanes.ts with the real worker) on fixture files: the counts
// add up across lanes, a file's output comes in one piece, a failing, throwing or crashing file is
// one failure and the rest still run, and a hung file stops the run.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runLanes, type TestFile } from './helpers/test-lanes.js';

const here = dirname(fileURLToPath(import.meta.url));
const worker = join(here, 'helpers', 'test-worker.js');
const fixture = (name: string): TestFile => ({ path: join(here, 'fixtures', 'lanes', `${name}.js`), name });

async function run(
  files: string[],
  options: {
    lanes?: number;
    alongside?: string[];
    alone?: string[];
    timeoutS?: number;
    alongsideTimeoutS?: number;
    graceS?: number;
  } = {},
) {
  let output = '';
  const env = { ...process.env, TEST_FILE_TIMEOUT_S: String(options.timeoutS ?? 60) };
  const tally = await runLanes({
    worker,
    files: files.map(fixture),
    lanes: options.lanes ?? 2,
    alongside: (options.alongside ?? []).map(fixture),
    alone: (options.alone ?? []).map(fixture),
    fileTimeoutS: options.timeoutS ?? 60,
    ...(options.alongsideTimeoutS === undefined ? {} : { alongsideTimeoutS: options.alongsideTimeoutS }),
    watchdogGraceS: options.graceS ?? 30,
    write: (text) => (output += text),
    env,
  });
  return { tally, output };
}

test('adds up the tests of every lane, the one alongside too, and prints each file whole with its time', async () => {
  const { tally, output } = await run(['passes', 'fails'], { alongside: ['also-passes'] });
  assert.equal([tally.passed, tally.total, tally.failedFiles], [6, 7, ['fails']]);
  assert.equal([...tally.times.keys()].sort(), ['also-passes', 'fails', 'passes']);
  assert.is(tally.stopped, undefined);
  assert.match(output, /^passes\n[^\n]*\(2 \/ 2\)\n \d+\.\d s\n/m);
  assert.match(output, /^also-passes\n[^\n]*\(3 \/ 3\)\n \d+\.\d s\n/m);
  assert.match(output, /^fails\n[^\n]*\(1 \/ 2\)\n\n\s+FAIL [^\n]*"fails"/m);
});

test('a hook that throws fails its file with its message, which uvu alone would drop', async () => {
  const { tally, output } = await run(['hook-throws', 'passes']);
  assert.equal([tally.passed, tally.total, tally.failedFiles], [2, 4, ['hook-throws']]);
  assert.match(
    output,
    /run-tests: hook-throws: suite "set-up fails": its before hook threw: Error: the before hook could not start its server/,
  );
  assert.match(
    output,
    /suite "tear-down fails": its after.each hook threw \(test "fails on its own"\): Error: the after.each hook/,
  );
});

test('runs the files that need the cores alone, after the lanes are done', async () => {
  const { tally } = await run(['also-passes', 'fails'], { alone: ['passes'] });
  assert.equal([tally.passed, tally.total], [6, 7]);
  assert.is([...tally.times.keys()].at(-1), 'passes');
});

test('a file that throws at import, or ends its process, is one failure; the lane goes on with a new worker', async () => {
  const { tally, output } = await run(['throws', 'crashes', 'passes', 'also-passes'], { lanes: 1 });
  assert.equal([tally.passed, tally.total, tally.failedFiles.sort()], [5, 7, ['crashes', 'throws']]);
  assert.match(output, /throws threw: Error: thrown at import/);
  assert.match(output, /the lane running crashes exited \(code 3\): counted as failed/);
});

test('a hung file is a failure and stops the run, with what it holds open', async () => {
  const { tally, output } = await run(['hangs', 'passes'], { lanes: 1, timeoutS: 1 });
  assert.is(tally.stopped, 'hangs hung');
  assert.equal(tally.failedFiles, ['hangs']);
  assert.is(tally.times.has('passes'), false);
  assert.match(
    output,
    /hangs still running after 1 s \(TEST_FILE_TIMEOUT_S\): counted as failed, the run stops here; open: .*Timeout/,
  );
});

test('the file alongside has a time-out of its own: it may outlast the others, and hangs past its own', async () => {
  const outlasts = await run(['passes'], { alongside: ['slow'], timeoutS: 1, alongsideTimeoutS: 30 });
  assert.equal([outlasts.tally.passed, outlasts.tally.failedFiles, outlasts.tally.stopped], [3, [], undefined]);
  const hangs = await run(['passes'], { alongside: ['hangs'], timeoutS: 30, alongsideTimeoutS: 1 });
  assert.is(hangs.tally.stopped, 'hangs hung');
  assert.match(hangs.output, /hangs still running after 1 s \(TEST_FILE_TIMEOUT_S\)/);
});

test('a lane that dies after its last file (an error that file left behind) is a failure of that file', async () => {
  const { tally, output } = await run(['leaves-a-throw'], { lanes: 1 });
  assert.equal([tally.passed, tally.total, tally.failedFiles], [1, 2, ['leaves-a-throw']]);
  assert.match(output, /the lane exited \(code 1\) after leaves-a-throw ended: counted as a failure of leaves-a-throw/);
});

test('a file that blocks its lane is ended from outside, counted as failed, and stops the run', async () => {
  const { tally, output } = await run(['blocks', 'passes'], { lanes: 1, timeoutS: 1, graceS: 1 });
  assert.is(tally.stopped, 'blocks hung');
  assert.equal(tally.failedFiles, ['blocks']);
  assert.is(tally.times.has('passes'), false);
  assert.match(output, /blocks did not end and its lane no longer answers: counted as failed, the run stops here/);
});

test.run();
