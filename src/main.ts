// The server process: `node dist/src/main.js` is `reports serve` (see src/cli/serve.ts).
import { runCli } from './cli/main.js';

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
runCli(['serve', ...process.argv.slice(2)], { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: stop.signal }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`report-store: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
