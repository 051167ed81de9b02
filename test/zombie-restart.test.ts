// A supervisor kills a hung service with its whole process group and starts it again, on a machine
// whose pid 1 reaps nothing (a container without an init): the killed server stays a zombie, and
// its lock must not keep the next start out.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { until } from './helpers/async.js';
import { childEnv, MAIN, startChildServer, type ChildServer } from './helpers/child-server.js';
import { requestTo } from './helpers/request.js';
import { tempDir } from './helpers/server.js';
import { processState, startUnreaped, untilZombie, type Unreaped } from './helpers/unreaped.js';

interface Context {
  dir: string;
  group?: Unreaped;
  next?: ChildServer;
}

/** The pids of `pid`'s children. */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The pid the highest lock generation names. */
async function lockHolder(dir: string): Promise<number | undefined> {
  const generations = (await readdir(dir)).flatMap((name) => /^LOCK\.(\d+)$/.exec(name)?.[1] ?? []).map(Number);
  const owner = JSON.parse(await readFile(join(dir, `LOCK.${Math.max(...generations)}`), 'utf8')) as { pid?: number };
  return owner.pid;
}

const zombie = suite<Context>('a restart after the server was killed and left a zombie');
zombie.before.each(async (context) => {
  context.dir = await tempDir('reports-zombie-');
  context.group = undefined;
  context.next = undefined;
});
zombie.after.each(async ({ dir, group, next }) => {
  if (next) {
    next.kill('SIGKILL');
    await next.waitExit().catch(() => undefined);
  }
  if (group) {
    try {
      process.kill(-group.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
    await group.reap();
  }
  await rm(dir, { recursive: true, force: true });
});

zombie(
  'a server SIGKILLed with its process group and never reaped does not block the next start on its data directory',
  async (context) => {
    // As `npm start` would: a shell in a group of its own, the server its child.
    const group = await startUnreaped(
      ['sh', '-c', `"${process.execPath}" "${MAIN}"; true`],
      childEnv({ REPORTS_DATA_DIR: context.dir }),
    );
    context.group = group;
    await until(() => group.lines().some((line) => line.includes('"listening"')), 'the first server to listen');
    const listening = JSON.parse(group.lines().find((line) => line.includes('"listening"')) ?? '{}') as { url: string };
    const request = requestTo(listening.url);
    await until(
      async () =>
        (await request('/readyz', { token: null }).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      'the first server to be ready',
    );
    const [server] = await childrenOf(group.pid);
    assert.ok(server !== undefined, 'the shell has no child');
    assert.is(await lockHolder(context.dir), server, 'the server holds the data directory');

    // The shell is stopped first: killed together, it could still reap the server before its own
    // SIGKILL took effect (seen once in CI), and then no zombie is left to test. Stopped, it cannot.
    process.kill(group.pid, 'SIGSTOP');
    await until(async () => (await processState(group.pid)) === 'T', 'the shell to stop');
    process.kill(-group.pid, 'SIGKILL');
    await untilZombie(server);
    await untilZombie(group.pid);
    assert.is(await processState(server), 'Z', 'the killed server is a zombie nobody reaps');

    const next = await startChildServer({ REPORTS_DATA_DIR: context.dir });
    context.next = next;
    await next.waitReady();
    assert.is(await lockHolder(context.dir), next.pid, 'the new server took the lock over');
    assert.is((await next.request('/readyz', { token: null })).status, 200);
    assert.ok(next.lines().some((line) => line['msg'] === 'listening'));
    assert.is(await processState(server), 'Z', 'the zombie is still there: the start did not wait for it to go');
  },
);

zombie.run();
