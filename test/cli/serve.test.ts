// `reports serve`: the service until interrupted (what `make run` and the container start); flags
// override their environment variables; a bad setting exits 2.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports, replaySummary, startReports } from '../helpers/cli.js';
import { TEST_TOKEN, tempDir } from '../helpers/server.js';

const serve = suite('reports serve');

serve(
  'serves on the address and data directory its flags name until interrupted, then exits 0 logging the digest replay prints',
  async () => {
    const dir = await tempDir('reports-serve-');
    try {
      const running = startReports(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], {
        env: { REPORTS_TOKENS: TEST_TOKEN, REPORTS_DATA_DIR: '/nonexistent/overridden', HOST: '0.0.0.0', PORT: '1' },
      });
      const printed = await running.waitFor(
        (found) => found.some((line) => line.includes('"msg":"listening"')),
        'the "listening" line',
      );
      const listening = printed
        .map((line) => JSON.parse(line) as { msg?: string; url?: string })
        .find((line) => line.msg === 'listening');
      assert.match(listening?.url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${listening?.url}/reports`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TEST_TOKEN}`, 'Content-Type': 'application/json' },
        body: '{"id":5,"name":"served"}',
      });
      assert.is(response.status, 200);
      await response.arrayBuffer();
      running.interrupt();
      const { code, stdout } = await running.done;
      assert.is(code, 0);
      const stopped = stdout
        .split('\n')
        .filter((line) => line.includes('"msg":"stopped"'))
        .map((line) => JSON.parse(line) as { position?: string; digest?: string; liveReports?: number });
      assert.is(stopped.length, 1);
      const summary = await replaySummary({ REPORTS_DATA_DIR: dir });
      assert.equal([summary.events, summary.liveReports], [1, 1]);
      assert.equal(stopped[0], { ...stopped[0], position: summary.position, digest: summary.digest, liveReports: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

serve('a bad setting exits 2 naming the variable', async () => {
  const { code, stderr } = await reports(['serve'], { env: { PORT: 'eighty' } });
  assert.is(code, 2);
  assert.match(stderr, 'bad setting PORT');
});

serve('a bad flag value exits 2 with the usage line, naming the flag and the variable it stands for', async () => {
  for (const [value, reason] of [
    ['abc', 'must be an integer, got "abc"'],
    ['99999', 'must be between 0 and 65535, got 99999'],
  ] as const) {
    const { code, stdout, stderr } = await reports(['serve', '--port', value]);
    assert.is(code, 2);
    assert.is(stdout, '');
    assert.is(
      stderr,
      `reports serve: bad --port (PORT): ${reason}\nusage: reports serve [--host HOST] [--port PORT] [--data-dir DIR]\n`,
    );
  }
});

/** Starts `reports serve` on a new data directory with no token configured; returns what it printed and the token it saved. */
async function firstStart(ttyStderr: boolean): Promise<{ stdout: string; stderr: string; token: string; dir: string }> {
  const dir = await tempDir('reports-serve-');
  const running = startReports(['serve', '--port', '0', '--data-dir', dir], { env: {}, ttyStderr });
  await running.waitFor((found) => found.some((line) => line.includes('"msg":"listening"')), 'the "listening" line');
  running.interrupt();
  const { code, stdout, stderr } = await running.done;
  assert.is(code, 0, stderr);
  return { stdout, stderr, token: (await readFile(join(dir, 'token'), 'utf8')).trim(), dir };
}

serve(
  'a generated token is never printed where output is collected: stderr names its file, and stdout has neither',
  async () => {
    const { stdout, stderr, token, dir } = await firstStart(false);
    try {
      assert.ok(token.length >= 32);
      assert.not.ok(stdout.includes(token), 'the token is on stdout');
      assert.not.ok(stderr.includes(token), 'the token is on stderr');
      assert.match(stderr, `created one and saved it in ${join(dir, 'token')} (mode 0600)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

serve('a generated token is shown once on stderr when stderr is a terminal, never on stdout', async () => {
  const { stdout, stderr, token, dir } = await firstStart(true);
  try {
    assert.is(stderr.split(token).length - 1, 1, stderr);
    assert.match(stderr, `Authorization: Bearer ${token}\n`);
    assert.not.ok(stdout.includes(token), 'the token is on stdout');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

serve.run();
