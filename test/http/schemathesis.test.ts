// Schema-driven fuzzing: schemathesis generates requests from /openapi.json (valid and invalid
// data, all checks) against a real server on the file log, and every finding fails the suite.
// It is installed by `make schemathesis` (or .ci/run) into .cache/schemathesis; without it the run
// says so loudly, and under CI=true this suite fails instead.
import { spawn } from 'node:child_process';
import { access, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, tempDir, TEST_TOKEN } from '../helpers/server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const st = `${root}.cache/schemathesis/bin/st`;
const MIN_CASES = 1000;

/** Runs in `cwd`: schemathesis keeps a cache of crashes in `.schemathesis/` of its working directory. */
function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_HOOKS: `${root}test/http/schemathesis_hooks.py` },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

const installed = await access(st).then(
  () => true,
  () => false,
);
const fuzz = suite('schemathesis against /openapi.json');

if (installed) {
  fuzz(`finds no response that disagrees with the OpenAPI document in at least ${MIN_CASES} cases`, async () => {
    const server = await startTestServer({ LOG_LEVEL: 'silent' });
    const workDir = await tempDir('schemathesis-');
    try {
      const { code, output } = await run(
        st,
        [
          '--config-file',
          `${root}test/http/schemathesis.toml`,
          'run',
          `${server.url}/openapi.json`,
          '--header',
          `Authorization: Bearer ${TEST_TOKEN}`,
          '--checks',
          'all',
          '--mode',
          'all',
          '--max-examples',
          '600',
          '--no-color',
        ],
        workDir,
      );
      assert.is(code, 0, `schemathesis reported findings:\n${output.slice(0, 20_000)}`);
      const generated = Number(/(\d+) generated/.exec(output)?.[1] ?? 0);
      assert.ok(generated >= MIN_CASES, `only ${generated} cases were generated:\n${output}`);
    } finally {
      await server.dispose();
      await rm(workDir, { recursive: true, force: true });
    }
  });
} else if (process.env['CI'] === 'true') {
  fuzz('has schemathesis installed (CI=true requires it)', () => {
    assert.unreachable(`schemathesis is not installed at ${st}: run \`make schemathesis\` (needs python3 with venv)`);
  });
} else {
  process.stderr.write(
    `\n${'#'.repeat(78)}\n# SKIPPED: the schemathesis suite. It is not installed at .cache/schemathesis.\n` +
      `# Run \`make schemathesis\` (python3 with venv, from PyPI) to fuzz /openapi.json.\n${'#'.repeat(78)}\n\n`,
  );
}

fuzz.run();
