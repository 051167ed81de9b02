// The backup walkthrough of docs/operations.md (test/examples/backup-walkthrough.sh, quoted there)
// runs as an operator would run it: `reports backup` beside a real server taking writes, the service
// stopped, `reports restore`, the service started again with the backup's digest.
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestTo } from '../helpers/request.js';
import { tempDir, TEST_TOKEN } from '../helpers/server.js';
import { reportBody } from '../http/requests.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(root, 'test/examples/backup-walkthrough.sh');
const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

const readme = suite('docs/operations.md backup walkthrough');
readme('quotes test/examples/backup-walkthrough.sh verbatim', async () => {
  const [text, source] = await Promise.all([readFile(`${root}docs/operations.md`, 'utf8'), readFile(SCRIPT, 'utf8')]);
  assert.ok(
    text.includes(source.trim()),
    'docs/operations.md does not contain the current test/examples/backup-walkthrough.sh',
  );
});
readme.run();

/** `reports`, start_service and stop_service as small scripts in `bin`: the service runs in the background, its pid in `pidFile`. */
async function operatorTools(dir: string): Promise<{ bin: string; pidFile: string; logFile: string }> {
  const bin = join(dir, 'bin');
  const pidFile = join(dir, 'server.pid');
  const logFile = join(dir, 'server.log');
  await mkdir(bin);
  const scripts = {
    reports: `exec "${process.execPath}" "${CLI}" "$@"`,
    start_service: [
      `: > "${logFile}"`,
      `"${process.execPath}" "${MAIN}" >> "${logFile}" 2>&1 &`,
      `echo $! > "${pidFile}"`,
      `for _ in $(seq 600); do grep -q '"msg":"listening"' "${logFile}" && exit 0; sleep 0.1; done; exit 1`,
    ].join('\n'),
    stop_service: `pid=$(cat "${pidFile}"); kill -TERM "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done`,
  };
  for (const [name, body] of Object.entries(scripts)) {
    await writeFile(join(bin, name), `#!/usr/bin/env bash\nset -euo pipefail\n${body}\n`);
    await chmod(join(bin, name), 0o755);
  }
  return { bin, pidFile, logFile };
}

const walkthrough = suite<{ dir: string }>('the backup walkthrough');
walkthrough.before.each(async (context) => {
  context.dir = await tempDir('reports-walkthrough-');
});
walkthrough.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

walkthrough(
  "backs up beside a server taking writes, restores, and the restarted service has the backup's digest",
  async ({ dir }) => {
    const { bin, logFile } = await operatorTools(dir);
    // The embedded log's walkthrough: nothing of a Kafka suite's environment (KAFKA_BROKERS) may reach it.
    const { KAFKA_BROKERS: _kafka, ...shell } = process.env;
    const env = {
      ...shell,
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      REPORTS_DATA_DIR: join(dir, 'data'),
      BACKUPS: join(dir, 'backups'),
      REPORTS_TOKENS: TEST_TOKEN,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    await run(join(bin, 'start_service'), { env });
    const url = /"msg":"listening".*?"url":"([^"]+)"|"url":"([^"]+)".*?"msg":"listening"/.exec(
      await readFile(logFile, 'utf8'),
    );
    const request = requestTo(url?.[1] ?? url?.[2] ?? '');
    let stop = false;
    let id = 0;
    const writer = (async () => {
      while (!stop)
        await request('/reports', { method: 'POST', json: reportBody(String((id += 1)), `report ${id}`) }).then(
          (response) => response.arrayBuffer(),
          () => undefined,
        );
    })();
    try {
      while (id < 200) await new Promise((resolve) => setImmediate(resolve));
      const { stdout } = await run('bash', [SCRIPT], { env });
      assert.match(stdout, /state digest:\s+sha256:[0-9a-f]{64}/);
      assert.match(stdout, /restored:\s+/);
    } finally {
      stop = true;
      await writer;
      await run(join(bin, 'stop_service'), { env }).catch(() => undefined);
    }
  },
);

walkthrough.run();
