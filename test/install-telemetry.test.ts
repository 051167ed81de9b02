// `npm ci` must not report the install anywhere. @asyncapi/parser (a test tool) brings Spectral,
// whose packages depend on @scarf/scarf: a postinstall script that posts install analytics unless
// the root package.json turns it off (`scarfSettings.enabled: false`; `skipTraversal` spares it an
// `npm ls` of the whole tree). The script is run here as npm runs it, pointed at a local receiver.
import { spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../', import.meta.url));
const REPORT_SCRIPT = join(root, 'node_modules/@scarf/scarf/report.js');

/** Runs Scarf's postinstall for the package in `packageDir` and returns how many reports reached the receiver. */
async function reportsSent(packageDir: string): Promise<number> {
  let received = 0;
  const receiver: Server = createServer((request, response) => {
    received += 1;
    request.resume();
    response.end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  // Nothing of the shell's own opt-outs: only package.json may decide.
  const inherited = Object.entries(process.env).filter(([name]) => !/^(SCARF_|DO_NOT_TRACK$)/.test(name));
  const env = { ...Object.fromEntries(inherited), INIT_CWD: packageDir, SCARF_LOCAL_PORT: String(port) };
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [REPORT_SCRIPT], { env, stdio: 'ignore' });
      child.once('error', reject);
      child.once('exit', () => resolve());
    });
    return received;
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
  }
}

const telemetry = suite('install telemetry (@scarf/scarf)');

const installed = await access(REPORT_SCRIPT).then(
  () => true,
  () => false,
);

telemetry('is still installed by a dependency, so the setting still matters (else this suite can go)', () => {
  assert.ok(installed, 'node_modules/@scarf/scarf is gone: drop scarfSettings from package.json and this test');
});

if (installed) {
  telemetry('sends nothing for this package: package.json turns it off', async () => {
    assert.is(await reportsSent(root), 0);
  });

  telemetry('would send a report without that setting (the receiver sees what Scarf sends)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reports-scarf-'));
    try {
      const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
        scarfSettings: Record<string, unknown>;
      };
      delete pkg.scarfSettings['enabled'];
      await writeFile(join(dir, 'package.json'), JSON.stringify(pkg));
      assert.is(await reportsSent(dir), 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

telemetry.run();
