// The parent's side of `run-tests --lanes N`: N worker processes (test-worker.ts) take files from
// one queue as they finish their last, the files matching --alongside go to one lane of their own,
// and those matching --alone run one at a time once the N lanes are done. A worker's output is held until its file ends and then written in one piece, so lanes never
// interleave their lines. A worker that dies mid-file costs that file (counted failed) and is
// replaced; a file that hangs stops the run, as it did when one process ran everything.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { FILE_ENDED, type FileCounts } from './test-file-ended.js';

export interface Tally {
  passed: number;
  total: number;
  skipped: number;
  readonly failedFiles: string[];
  /** Seconds per file run, in the order the files ended. */
  readonly times: Map<string, number>;
  /** Why the run stopped before its queue was done (a hung file), if it did. */
  stopped?: string;
}

export interface TestFile {
  readonly path: string;
  readonly name: string;
}

export interface LanesOptions {
  /** The compiled test-worker.js. */
  readonly worker: string;
  readonly files: readonly TestFile[];
  readonly lanes: number;
  readonly alongside: readonly TestFile[];
  /** TEST_FILE_TIMEOUT_S (given to the workers): they stop a file that runs longer; a lane that does not answer WATCHDOG_GRACE_S later is killed. */
  readonly fileTimeoutS: number;
  /**
   * The time-out of the files run alongside (fileTimeoutS unless given): they are off the run's
   * critical path, and the cluster fault suite takes most of fileTimeoutS on its own.
   */
  readonly alongsideTimeoutS?: number;
  /** Seconds after a file's time-out before its lane is killed (WATCHDOG_GRACE_S unless given). */
  readonly watchdogGraceS?: number;
  /** Files run one at a time once the lanes are done (beside the lane alongside only): the few whose time bounds need the cores. */
  readonly alone?: readonly TestFile[];
  readonly write: (text: string) => void;
  /** The workers' environment (this process's unless given). */
  readonly env?: NodeJS.ProcessEnv;
}

type Worker = ChildProcessByStdio<Writable, Readable, null>;

/** How long after a file's time-out a lane that has not reported it is killed. */
const WATCHDOG_GRACE_S = 30;

export function runLanes(options: LanesOptions): Promise<Tally> {
  const tally: Tally = { passed: 0, total: 0, skipped: 0, failedFiles: [], times: new Map() };
  const workers = new Set<Worker>();
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));

  const add = (counts: FileCounts) => {
    tally.passed += counts.passed;
    tally.total += counts.total;
    tally.skipped += counts.skipped;
    if (counts.failed) tally.failedFiles.push(counts.file);
    tally.times.set(counts.file, counts.seconds);
  };
  const stop = (why: string) => {
    tally.stopped ??= why;
    for (const worker of workers) worker.kill('SIGTERM');
  };

  /** One lane: a worker that runs `queue`'s files one by one; a fresh worker if one dies. */
  const lane = (queue: TestFile[], timeoutS = options.fileTimeoutS): Promise<void> =>
    new Promise((laneDone) => {
      const start = () => {
        const worker: Worker = spawn(process.execPath, [options.worker], {
          stdio: ['pipe', 'pipe', 'inherit'],
          env: { ...(options.env ?? process.env), TEST_FILE_TIMEOUT_S: String(timeoutS) },
        });
        workers.add(worker);
        let current: TestFile | undefined;
        let last: TestFile | undefined;
        let dispatchedMs = 0;
        let watchdog: NodeJS.Timeout | undefined;
        let held = '';
        let partial = '';
        const next = () => {
          clearTimeout(watchdog);
          current = tally.stopped === undefined ? queue.shift() : undefined;
          if (current === undefined) {
            worker.stdin.end();
            return;
          }
          last = current;
          dispatchedMs = performance.now();
          worker.stdin.write(`${JSON.stringify([current.path, current.name])}\n`);
          // The worker times its files out itself; a file that blocks the worker's event loop cannot
          // be, so the lane is ended from here too, a little later.
          const file = current;
          watchdog = setTimeout(
            () => {
              if (current !== file) return;
              options.write(
                `${held}${partial}\nrun-tests: ${file.name} did not end and its lane no longer answers: counted as failed, the run stops here\n`,
              );
              held = partial = '';
              add({ ...failure(file), hung: true });
              current = undefined;
              stop(`${file.name} hung`);
              worker.kill('SIGKILL');
            },
            (timeoutS + (options.watchdogGraceS ?? WATCHDOG_GRACE_S)) * 1000,
          );
        };
        const failure = (file: TestFile): FileCounts => ({
          file: file.name,
          passed: 0,
          total: 1,
          skipped: 0,
          failed: true,
          hung: false,
          seconds: (performance.now() - dispatchedMs) / 1000,
        });
        // A worker that died is seen at 'close'; a write to it meanwhile must not crash this process.
        worker.stdin.on('error', () => undefined);
        worker.on('error', (error) => options.write(`\nrun-tests: a lane's process failed: ${error.message}\n`));
        worker.stdout.setEncoding('utf8');
        worker.stdout.on('data', (chunk: string) => {
          const lines = (partial + chunk).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) {
            if (!line.startsWith(FILE_ENDED)) {
              held += `${line}\n`;
              continue;
            }
            const counts = JSON.parse(line.slice(FILE_ENDED.length)) as FileCounts;
            options.write(held);
            held = '';
            add(counts);
            if (counts.hung) stop(`${counts.file} hung`);
            next();
          }
        });
        worker.on('close', (code, signal) => {
          clearTimeout(watchdog);
          workers.delete(worker);
          if (held || partial) options.write(held + partial);
          held = partial = '';
          if (tally.stopped === undefined && current !== undefined) {
            // Died mid-file (an uncaught error, a crash): that file failed; the rest go on.
            options.write(
              `\nrun-tests: the lane running ${current.name} exited (${signal ?? `code ${code}`}): counted as failed\n`,
            );
            add(failure(current));
            start();
            return;
          }
          if (tally.stopped === undefined && (code !== 0 || signal !== null) && last !== undefined) {
            // Died after its last file reported (a timer or a rejection that file left behind): it failed.
            options.write(
              `\nrun-tests: the lane exited (${signal ?? `code ${code}`}) after ${last.name} ended: counted as a failure of ${last.name}\n`,
            );
            tally.total += 1;
            if (!tally.failedFiles.includes(last.name)) tally.failedFiles.push(last.name);
          }
          laneDone();
        });
        next();
      };
      if (queue.length > 0 && tally.stopped === undefined) start();
      else laneDone();
    });

  const queue = [...options.files];
  const lanes = Promise.all(Array.from({ length: options.lanes }, () => lane(queue))).then(() =>
    lane([...(options.alone ?? [])]),
  );
  void Promise.all([lane([...options.alongside], options.alongsideTimeoutS), lanes]).then(() => finish());
  return done.then(() => tally);
}
