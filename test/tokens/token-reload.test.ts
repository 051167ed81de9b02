// Rotation without a restart, in-process: a reload (as a SIGHUP asks, or a change of the tokens
// file) swaps the whole set; a removed token is refused from the next request on, a request already
// authorised finishes; a file that does not parse keeps the set in use and says why in one line.
import { execFileSync } from 'node:child_process';
import { constants, mkdirSync } from 'node:fs';
import { appendFile, mkdir, open, readFile, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReloadRequests } from '../../src/process-signals.js';
import { until, withTimeout } from '../helpers/async.js';
import { openSocket } from '../helpers/raw-http.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const ALPHA = 'alpha-token-0123456789abcdef';
const BETA = 'beta-token-0123456789abcdefg';
const GAMMA = 'gamma-token-0123456789abcdef';
const SECRETS = [ALPHA, BETA, GAMMA];

interface Context {
  dir: string;
  file: string;
  server: TestServer;
}

async function post(server: TestServer, token: string, id: number): Promise<number> {
  const response = await server.request('/reports', { method: 'POST', json: { id, name: `report ${id}` }, token });
  await response.arrayBuffer();
  return response.status;
}

const reloadLines = (server: TestServer, msg = 'tokens reloaded') =>
  server.logLines().filter((line) => line['msg'] === msg);
const failures = (server: TestServer) =>
  server.logLines().filter((line) => typeof line['msg'] === 'string' && line['msg'].startsWith('tokens not reloaded'));

async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await server.request('/metrics', { token: null })).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

function start(watch: boolean, reloadRequests?: ReloadRequests) {
  return async (context: Context) => {
    context.dir = await tempDir('reports-reload-');
    context.file = join(context.dir, 'tokens');
    await writeFile(context.file, `alpha write,read ${ALPHA}\nbeta write,read ${BETA}\n`, { mode: 0o600 });
    context.server = await startTestServer(
      { REPORTS_TOKENS: '', REPORTS_TOKENS_FILE: context.file },
      { dataDir: join(context.dir, 'data'), watchTokensFile: watch, ...(reloadRequests ? { reloadRequests } : {}) },
    );
  };
}

async function stop({ server, dir }: Context) {
  await server?.dispose();
  await rm(dir, { recursive: true, force: true });
}

const reload = suite<Context>('reloadTokens');
reload.before.each(start(false));
reload.after.each(stop);

reload(
  'refuses a removed token from the next request on, keeps the others, and logs names and counts, never a token',
  async ({ server, file }) => {
    assert.is(await post(server, BETA, 1), 200);
    await writeFile(file, `alpha write,read ${ALPHA}\ngamma read ${GAMMA}\n`);
    assert.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, BETA, 2), 401);
    assert.is(await post(server, ALPHA, 3), 200);
    assert.is(await post(server, GAMMA, 4), 403, 'the new token, with its scopes');
    const [line, ...more] = reloadLines(server);
    assert.equal(more, []);
    assert.equal(
      { ...line, level: undefined, time: undefined, pid: undefined, hostname: undefined, service: undefined },
      {
        level: undefined,
        time: undefined,
        pid: undefined,
        hostname: undefined,
        service: undefined,
        msg: 'tokens reloaded',
        trigger: 'SIGHUP',
        tokens: 2,
        added: ['gamma'],
        removed: ['beta'],
        rotated: [],
        rescoped: [],
        unnamedAdded: 0,
        unnamedRemoved: 0,
      },
    );
    for (const secret of SECRETS) assert.not.match(JSON.stringify(server.logLines()), secret);
  },
);

reload(
  'keeps the tokens in use when the file does not parse, and logs one line naming the file and line, never a token',
  async ({ server, file }) => {
    await writeFile(file, `alpha write,read ${ALPHA}\nbeta write,admin ${BETA}\n`);
    assert.not.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, ALPHA, 1), 200);
    assert.is(await post(server, BETA, 2), 200, 'the set in use stays whole: beta is still valid');
    const lines = failures(server);
    assert.is(lines.length, 1);
    assert.is(lines[0]?.['level'], 50);
    assert.is(
      lines[0]?.['msg'],
      `tokens not reloaded (SIGHUP): REPORTS_TOKENS_FILE: ${file} line 2: unknown scope in the second field; the scopes are read and write, separated by commas; the 2 tokens in use are kept`,
    );
    assert.equal(reloadLines(server), []);
    assert.is(await metric(server, 'reports_token_reload_failures_total'), 1);
    assert.is(await metric(server, 'reports_token_reload_last_succeeded'), 0);
    for (const secret of SECRETS) assert.not.match(JSON.stringify(server.logLines()), secret);
    // Mended: the next reload takes it.
    await writeFile(file, `alpha write,read ${ALPHA}\n`);
    assert.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, BETA, 3), 401);
    assert.is(await metric(server, 'reports_token_reloads_total'), 2);
    assert.is(await metric(server, 'reports_token_reload_last_succeeded'), 1);
  },
);

reload('keeps the tokens in use when the file is gone, empty, or holds a token twice', async ({ server, file }) => {
  for (const [content, reason] of [
    [undefined, 'cannot read'],
    ['# nobody\n', 'holds no token'],
    [`${ALPHA}\nagain read ${ALPHA}\n`, 'line 2: the same token as'],
  ] as const) {
    if (content === undefined) await rm(file);
    else await writeFile(file, content);
    assert.not.ok(await server.reloadTokens('SIGHUP'));
    assert.match(String(failures(server).at(-1)?.['msg']), reason);
    assert.is(await post(server, BETA, Math.floor(Math.random() * 1e9)), 200);
  }
  assert.is(failures(server).length, 3);
});

reload(
  'keeps the tokens in use when a FIFO or a directory is at its path, and takes the file mended',
  async ({ server, file }) => {
    for (const [make, kind] of [
      [() => execFileSync('mkfifo', ['-m', '600', file]), 'a FIFO (named pipe)'],
      [() => mkdirSync(file), 'a directory'],
    ] as const) {
      await rm(file, { recursive: true });
      make();
      try {
        assert.not.ok(await withTimeout(server.reloadTokens('SIGHUP'), 5_000, 'the reload to end'));
      } finally {
        // Should a reader wait in the FIFO's open, a writer lets it go (else no later reload, nor the exit, could run).
        if (kind !== 'a directory')
          await open(file, constants.O_WRONLY | constants.O_NONBLOCK).then(
            (f) => f.close(),
            () => undefined,
          );
      }
      assert.match(String(failures(server).at(-1)?.['msg']), `cannot read ${file}: it is ${kind}, not a regular file`);
      assert.is(await metric(server, 'reports_token_reload_last_succeeded'), 0);
      assert.is(await post(server, BETA, Math.floor(Math.random() * 1e9)), 200, 'the set in use is kept');
    }
    await rm(file, { recursive: true });
    await writeFile(file, `alpha write,read ${ALPHA}\n`);
    assert.ok(await withTimeout(server.reloadTokens('SIGHUP'), 5_000, 'the reload to end'));
    assert.is(await post(server, BETA, Math.floor(Math.random() * 1e9)), 401, 'the mended file is the set in use');
  },
);

reload(
  'keeps the tokens in use while a line written in place has no newline at its end, and takes it once it has',
  async ({ server, file }) => {
    // An append cut short: the name of a line whose scopes and token are still to come.
    await appendFile(file, 'cleanup-job');
    assert.not.ok(await server.reloadTokens('SIGHUP'));
    assert.match(String(failures(server).at(-1)?.['msg']), `${file}: its last line has no newline at its end`);
    assert.is(await post(server, 'cleanup-job', 1), 401, 'a name is never a token');
    // Cut after the first characters of its token.
    await appendFile(file, ` write ${GAMMA.slice(0, 3)}`);
    assert.not.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, GAMMA.slice(0, 3), 2), 401, 'the first characters of a token are no token');
    await appendFile(file, `${GAMMA.slice(3)}\n`);
    assert.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, GAMMA, 3), 200, 'the whole line is taken');
    assert.is(await post(server, BETA, 4), 200);
    // Another file renamed into place is whole, with or without a final newline (a Kubernetes
    // Secret made --from-literal, printf): a token removed so is removed.
    await writeFile(`${file}.new`, `alpha write,read ${ALPHA}`, { mode: 0o600 });
    await rename(`${file}.new`, file);
    assert.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, BETA, 5), 401, 'removed');
    // And a SIGHUP that finds it unchanged changes nothing.
    assert.ok(await server.reloadTokens('SIGHUP'));
    assert.is(await post(server, ALPHA, 6), 200);
  },
);

reload('lets a request already authorised finish after its token was removed', async ({ server, file }) => {
  const socket = await openSocket(server.url);
  try {
    const body = '{"id": 77, "name": "in flight"}';
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    // The headers alone: the route has checked the token and waits for the body.
    socket.write(
      `POST /reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${BETA}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // The server shares this event loop: a few turns take the headers in and run the route up to
    // its wait for the body. (Too short a wait would fail the test with a 401, never pass it wrongly.)
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is(answer, '');
    await writeFile(file, `alpha write,read ${ALPHA}\n`);
    assert.ok(await server.reloadTokens('SIGHUP'));
    socket.write(body);
    await until(() => answer.includes('\r\n\r\n{'), 'the answer to the request in flight');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.is(await post(server, BETA, 78), 401);
  } finally {
    socket.destroy();
  }
});

reload('says a reload that found nothing changed, and keeps the set (and what it verified)', async ({ server }) => {
  assert.ok(await server.reloadTokens('SIGHUP'));
  assert.equal(reloadLines(server), []);
  const [line] = reloadLines(server, 'tokens reloaded: nothing changed');
  assert.is(line?.['trigger'], 'SIGHUP');
  assert.is(line?.['level'], 30);
  assert.is(await post(server, BETA, 5), 200);
});

reload.run();

const signals = suite<Context & { hangUp: () => void }>('reload requests');
signals.before.each(async (context) => {
  const listeners = new Set<(trigger: string) => void>();
  context.hangUp = () => listeners.forEach((listener) => listener('SIGHUP'));
  await start(false, { subscribe: (listener) => (listeners.add(listener), () => void listeners.delete(listener)) })(
    context,
  );
});
signals.after.each(stop);

signals('reloads the tokens on each request (SIGHUP)', async ({ server, file, hangUp }) => {
  await writeFile(file, `alpha write,read ${ALPHA}\n`);
  hangUp();
  await until(() => reloadLines(server).length === 1, 'the reload line');
  assert.equal(reloadLines(server)[0]?.['removed'], ['beta']);
  assert.is(reloadLines(server)[0]?.['trigger'], 'SIGHUP');
  assert.is(await post(server, BETA, 1), 401);
});

signals.run();

const watching = suite<Context>('tokens file watch');
watching.before.each(start(true));
watching.after.each(stop);

const fileReloads = (server: TestServer) => reloadLines(server).filter((line) => line['trigger'] === 'file change');

watching('reloads when an editor replaces the file by renaming a new one over it', async ({ server, dir, file }) => {
  const temporary = join(dir, '.tokens.swp');
  await writeFile(temporary, `alpha write,read ${ALPHA}\ngamma write ${GAMMA}\n`, { mode: 0o600 });
  await rename(temporary, file);
  await until(() => fileReloads(server).length === 1, 'a reload after the rename');
  assert.equal(fileReloads(server)[0]?.['added'], ['gamma']);
  assert.is(await post(server, BETA, 1), 401);
  assert.is(await post(server, GAMMA, 2), 200);
  // And again: the watch survived the rename (it watches the directory, not the replaced file).
  await writeFile(temporary, `gamma write ${GAMMA}\n`, { mode: 0o600 });
  await rename(temporary, file);
  await until(() => fileReloads(server).length === 2, 'a reload after the second rename');
  assert.is(await post(server, ALPHA, 3), 401);
});

watching('reloads when the file is written in place, once for a burst of writes', async ({ server, file }) => {
  await writeFile(file, '');
  await appendFile(file, `alpha write,read ${ALPHA}\n`);
  await appendFile(file, `gamma read ${GAMMA}\n`);
  await until(() => fileReloads(server).length >= 1, 'a reload after the writes');
  assert.equal(
    fileReloads(server).map((line) => [line['added'], line['removed']]),
    [[['gamma'], ['beta']]],
  );
  assert.equal(failures(server), [], 'the empty file of a moment ago was never read: the reload came after the burst');
});

watching(
  'ignores a change that changes nothing (a touch) but for a debug line, and keeps watching',
  async ({ server, file }) => {
    const now = new Date();
    await utimes(file, now, now);
    await until(
      () => reloadLines(server, 'tokens reloaded: nothing changed').length === 1,
      'the reload of the touched file',
    );
    assert.is(reloadLines(server, 'tokens reloaded: nothing changed')[0]?.['level'], 20);
    await writeFile(file, `${await readFile(file, 'utf8')}gamma read ${GAMMA}\n`);
    await until(() => fileReloads(server).length === 1, 'the reload of a real change');
    assert.is(await post(server, GAMMA, 1), 403);
  },
);

watching('takes a bad file as a SIGHUP does: the set in use stays, and one line says why', async ({ server, file }) => {
  await writeFile(file, `alpha write,read ${ALPHA}\nbeta\twrite,read\n`);
  await until(() => failures(server).length === 1, 'the failed reload line');
  assert.match(
    String(failures(server)[0]?.['msg']),
    `tokens not reloaded (file change): REPORTS_TOKENS_FILE: ${file} line 2: expected`,
  );
  assert.is(await post(server, BETA, 1), 200);
  assert.not.match(JSON.stringify(server.logLines()), BETA);
});

watching.run();

const volume = suite<Context>('a Kubernetes Secret volume');
volume.before.each(async (context) => {
  // As the kubelet lays one out: the file is a link through `..data`, a link to a timestamped directory.
  context.dir = await tempDir('reports-reload-');
  const mount = join(context.dir, 'secret');
  await mkdir(join(mount, '..2026_11_26_01'), { recursive: true });
  await writeFile(join(mount, '..2026_11_26_01', 'tokens'), `alpha write,read ${ALPHA}\nbeta write,read ${BETA}\n`, {
    mode: 0o600,
  });
  await symlink('..2026_11_26_01', join(mount, '..data'));
  await symlink('..data/tokens', join(mount, 'tokens'));
  context.file = join(mount, 'tokens');
  context.server = await startTestServer(
    { REPORTS_TOKENS: '', REPORTS_TOKENS_FILE: context.file },
    { dataDir: join(context.dir, 'data') },
  );
});
volume.after.each(stop);

volume('reloads when its whole directory is replaced by another, and watches the new one', async ({ server, dir }) => {
  // As configuration management replaces a directory: the new one built beside it, then renamed in place.
  const mount = join(dir, 'secret');
  await mkdir(`${mount}.new`);
  await writeFile(join(`${mount}.new`, 'tokens'), `alpha write,read ${ALPHA}\n`, { mode: 0o600 });
  await rename(mount, `${mount}.old`);
  await rename(`${mount}.new`, mount);
  await until(() => reloadLines(server).length === 1, 'the reload of the new directory', { timeoutMs: 10_000 });
  assert.is(await post(server, BETA, 1), 401);
  // Its changes are seen too: the watch follows the directory now in place.
  await writeFile(join(mount, 'tokens'), `alpha write,read ${ALPHA}\ngamma write ${GAMMA}\n`);
  await until(() => reloadLines(server).length === 2, 'the reload of a change in it', { timeoutMs: 10_000 });
  assert.is(await post(server, GAMMA, 2), 200);
});

volume(
  'watches a directory removed and made again in its place (ext4 gives it the same inode)',
  async ({ server, dir }) => {
    const mount = join(dir, 'secret');
    await rm(mount, { recursive: true });
    await mkdir(mount);
    await writeFile(join(mount, 'tokens'), `alpha write,read ${ALPHA}\n`, { mode: 0o600 });
    await until(() => reloadLines(server).length === 1, 'the reload of the new directory', { timeoutMs: 10_000 });
    assert.is(await post(server, BETA, 1), 401);
    await writeFile(join(mount, 'tokens'), `alpha write,read ${ALPHA}\ngamma write ${GAMMA}\n`);
    await until(() => reloadLines(server).length === 2, 'the reload of a change in it', { timeoutMs: 10_000 });
    assert.is(await post(server, GAMMA, 2), 200);
  },
);

volume('reloads when the volume swaps its ..data link to a new directory', async ({ server, dir }) => {
  const mount = join(dir, 'secret');
  await mkdir(join(mount, '..2026_11_26_02'));
  await writeFile(join(mount, '..2026_11_26_02', 'tokens'), `alpha write,read ${ALPHA}\n`, { mode: 0o600 });
  await symlink('..2026_11_26_02', join(mount, '..data_tmp'));
  await rename(join(mount, '..data_tmp'), join(mount, '..data'));
  await until(() => fileReloads(server).length === 1, 'a reload after the swap');
  assert.equal(fileReloads(server)[0]?.['removed'], ['beta']);
  assert.is(await post(server, BETA, 1), 401);
  assert.is(await post(server, ALPHA, 2), 200);
});

volume.run();

const generated = suite<{ dir: string; server: TestServer }>('the generated token file');
generated.before.each(async (context) => {
  context.dir = await tempDir('reports-reload-');
  context.server = await startTestServer({ REPORTS_TOKENS: '' }, { dataDir: context.dir });
});
generated.after.each(async ({ server, dir }) => {
  await server.dispose();
  await rm(dir, { recursive: true, force: true });
});

generated(
  'takes a named line appended to data/token without a restart, the generated token working as before',
  async ({ server, dir }) => {
    const path = join(dir, 'token');
    const token = (await readFile(path, 'utf8')).trim();
    assert.is(await post(server, token, 1), 200);
    await appendFile(path, `reader read ${GAMMA}\n`);
    await until(() => fileReloads(server).length === 1, 'the reload of data/token');
    assert.equal(fileReloads(server)[0]?.['added'], ['reader']);
    assert.is(await post(server, GAMMA, 2), 403);
    assert.is(await post(server, token, 3), 200);
    // The log files beside it change on every write; none of that is a reload.
    for (let id = 10; id < 30; id += 1) assert.is(await post(server, token, id), 200);
    assert.is(reloadLines(server).length + reloadLines(server, 'tokens reloaded: nothing changed').length, 1);
  },
);

generated.run();
