// What a long operation of the tools (backup, restore, verify, seal-history) is handed by whoever
// runs it, so that the operation never depends on a command line: when to stop, and where its
// progress goes. The CLI draws a bar on a terminal (`toolRun` in cli/progress.ts).

export interface Progress {
  update(done: number): void;
  stop(): void;
}

export interface ToolRun {
  /** Aborted when the operator interrupts (SIGINT): the operation stops at its next step. */
  readonly signal: AbortSignal;
  /** Starts showing the progress of `total` steps named `label`. */
  progress(label: string, total: number): Progress;
}
