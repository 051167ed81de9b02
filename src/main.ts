// The server process: `node dist/src/main.js` is `reports serve` (see src/cli/serve.ts). The signal
// handlers are installed before the rest of the program is loaded, so a stop (or a SIGHUP, which
// reloads the tokens) asked for at any moment of the start is seen.
import { processReloadSignal, processStopSignal } from './process-signals.js';
import { dropKafkajsNegativeTimeouts } from './process-warnings.js';

dropKafkajsNegativeTimeouts();
const signal = processStopSignal();
const reload = processReloadSignal();
const { runCli } = await import('./cli/main.js');
runCli(['serve', ...process.argv.slice(2)], {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal,
  reload,
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`report-store: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
