// A progress bar with rate and ETA (cli-progress) when stdout is a terminal; nothing otherwise,
// so piped output stays clean.
import cliProgress from 'cli-progress';
import type { Progress, ToolRun } from '../tool-run.js';
import type { CliIo } from './usage.js';

export function startProgress(io: CliIo, label: string, total: number): Progress {
  if (!io.stdout.isTTY || total === 0) return { update: () => undefined, stop: () => undefined };
  const started = performance.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: io.stdout,
      format: `${label} [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | ETA {eta_formatted}`,
      etaBuffer: 1000,
      fps: 10,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0 });
  return {
    update(done) {
      const seconds = (performance.now() - started) / 1000;
      bar.update(Math.min(done, total), { rate: seconds > 0 ? Math.round(done / seconds) : 0 });
    },
    stop() {
      bar.stop();
    },
  };
}

/** What the tools' long operations are handed from the command line: its interrupt, and bars on a terminal. */
export function toolRun(io: CliIo): ToolRun {
  return { signal: io.signal, progress: (label, total) => startProgress(io, label, total) };
}
