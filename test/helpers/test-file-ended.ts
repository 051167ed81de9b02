// What a lane's worker (test-worker.ts) tells the parent (test-lanes.ts) when a file ends: one line
// that starts with FILE_ENDED and carries the file's counts as JSON. In a module of its own, as the
// worker's module runs the worker when it is imported.

/** The start of the line that ends a file's output; a control character no test prints. */
export const FILE_ENDED = '\u001erun-tests:file-ended ';

export interface FileCounts {
  readonly file: string;
  readonly passed: number;
  readonly total: number;
  readonly skipped: number;
  readonly failed: boolean;
  readonly hung: boolean;
  readonly seconds: number;
}
