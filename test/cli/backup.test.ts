// `reports backup` and `reports restore` on the embedded log: an online backup is a consistent,
// verified prefix of the log taken while the server writes on; a restore puts it in place of a
// stopped server's log, and the server starts from it with the digest the backup printed. Killing
// the backup or the server during it leaves nothing that passes for a backup, and a good one.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { readdir, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '../helpers/async.js';
import { startChildServer } from '../helpers/child-server.js';
import { reports } from '../helpers/cli.js';
import { logDigest, serverDigest } from '../helpers/digest.js';
import { created } from '../helpers/events.js';
import { appendToFileLog, eventsLogPath, flipByte } from '../helpers/file-history.js';
import { memoryLogger, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import type { TestRequest } from '../helpers/request.js';
import { reportBody } from '../http/requests.js';
import { decodeEvent } from '../../projections/codec.js';
import { parseKeyId } from '../../src/keys/key-store.js';
import { slotOfKeyId, slotPosition } from '../../src/keys/key-slots.js';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { readRecords } from '../../src/log/record-batches.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface Printed {
  readonly dir: string;
  readonly records: number;
  readonly digest: string;
}

/** What `reports backup` or `reports restore` printed: the position's record count and the digest. */
function printed(stdout: string): Printed {
  const field = (name: string) => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(stdout)?.[1] ?? '';
  return {
    dir: field('backup'),
    records: Number(/^(\d+)/.exec(field('position'))?.[1]),
    digest: field('state digest'),
  };
}

async function backup(dataDir: string, dest: string): Promise<Printed> {
  const { code, stdout, stderr } = await reports(['backup', dest], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 0, stderr);
  return printed(stdout);
}

async function restore(dataDir: string, src: string): Promise<Printed> {
  const { code, stdout, stderr } = await reports(['restore', src], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 0, stderr);
  return printed(stdout);
}

/** Writers that create reports through `request` until stopped; counts what was acknowledged. */
function keepWriting(request: TestRequest, workers = 8): { acknowledged: () => number; stop: () => Promise<void> } {
  let acknowledged = 0;
  let stopped = false;
  let next = 1_000_000;
  const loops = Array.from({ length: workers }, async () => {
    while (!stopped) {
      const response = await request('/reports', {
        method: 'POST',
        json: reportBody(String(next++), 'written during the backup'),
      }).catch(() => undefined);
      if (response?.status === 200) acknowledged += 1;
      await response?.arrayBuffer();
    }
  });
  return {
    acknowledged: () => acknowledged,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** The values of `dataDir`'s log records, in order. */
async function readFileLogRecords(dataDir: string): Promise<{ value: Buffer }[]> {
  const log = await openFileLogReader({ dir: dataDir, logger: memoryLogger().logger });
  try {
    const records: { value: Buffer }[] = [];
    for await (const record of readRecords(log, new Map())) records.push(record);
    return records;
  } finally {
    await log.close();
  }
}

/** Starts a server on `dataDir`, checks it folded to `digest`, and stops it. */
async function expectServerDigest(dataDir: string, digest: string): Promise<void> {
  const server = await startTestServer({}, { dataDir });
  try {
    assert.is(await serverDigest(server), digest, "the restored server's state");
  } finally {
    await server.close();
  }
}

const online = suite<{ dir: string }>('reports backup and restore: file log');
online.before.each(async (context) => {
  context.dir = await tempDir('reports-backup-');
});
online.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

online(
  'copies a verified prefix while the server writes on; the server restored from it has its digest',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await appendToFileLog(
      dataDir,
      Array.from({ length: 10_000 }, (_, i) => created(String(i), `report ${i}`)),
    );
    let server: TestServer = await startTestServer({ REPORTS_SNAPSHOT_EVERY: '5000' }, { dataDir });
    const writers = keepWriting(server.request);
    let taken: Printed;
    let during: number;
    try {
      const before = writers.acknowledged();
      taken = await backup(dataDir, join(dir, 'backup'));
      during = writers.acknowledged() - before;
      assert.ok(
        taken.records >= 10_000 + before,
        `the backup (${taken.records} records) holds every write acknowledged before it`,
      );
    } finally {
      await writers.stop();
      await server.close();
    }
    assert.ok(during > 0, 'writes were acknowledged while the backup ran');
    assert.is(await logDigest(dataDir, taken.records), taken.digest, 'the digest of that prefix of the live log');
    const restored = await restore(dataDir, join(dir, 'backup'));
    assert.equal([restored.records, restored.digest], [taken.records, taken.digest]);
    await expectServerDigest(dataDir, taken.digest);
    server = await startTestServer({}, { dataDir });
    await server.close();
    const verify = await reports(['verify'], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(verify.code, 0, verify.stdout);
  },
);

online(
  'ends before a last batch whose key is not yet in keys.db (written at the same time, not acknowledged), as a restart cuts it',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    const server = await startTestServer({}, { dataDir });
    let digestBefore: string;
    try {
      for (const id of ['1', '2'])
        assert.is(
          (await server.request('/reports', { method: 'POST', json: reportBody(id, `report ${id}`) })).status,
          200,
        );
      digestBefore = await serverDigest(server);
      assert.is((await server.request('/reports', { method: 'POST', json: reportBody('3', 'report 3') })).status, 200);
    } finally {
      await server.close();
    }
    // As the log's last group commit is found when its batch is on disk and its key's put is not yet:
    // keys.db ends before the key's slot.
    const records = await readFileLogRecords(dataDir);
    const last = decodeEvent((records.at(-1) as { value: Buffer }).value);
    assert.ok(last.ok && last.event.type === 'ReportCreated' && 'sealed' in last.event.data);
    const slot = slotOfKeyId(parseKeyId(last.event.data.sealed.key)) as number;
    const keysDb = join(dataDir, 'keys.db');
    assert.is((await stat(keysDb)).size, slotPosition(slot + 1), "the create's key is keys.db's last slot");
    await truncate(keysDb, slotPosition(slot));

    const taken = await backup(dataDir, join(dir, 'backup'));
    assert.is(taken.records, records.length - 1, 'the unkeyed batch is left out');
    assert.is(taken.digest, digestBefore);
    const restored = await restore(join(dir, 'restored'), join(dir, 'backup'));
    assert.is(restored.digest, taken.digest);
    await expectServerDigest(join(dir, 'restored'), taken.digest);
  },
);

online('restore refuses while a server runs on the data directory, and changes nothing', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  const server = await startTestServer({}, { dataDir });
  try {
    assert.is((await server.request('/reports', { method: 'POST', json: reportBody('1', 'one') })).status, 200);
    await backup(dataDir, join(dir, 'backup'));
    const before = await stat(eventsLogPath(dataDir));
    const refused = await reports(['restore', join(dir, 'backup')], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(refused.code, 1);
    assert.match(
      refused.stderr,
      `refusing to restore into ${dataDir}: process ${process.pid} (a server or a reports tool) is running on it; stop it first`,
    );
    assert.equal(await stat(eventsLogPath(dataDir)).then(({ size, mtimeMs }) => [size, mtimeMs]), [
      before.size,
      before.mtimeMs,
    ]);
  } finally {
    await server.close();
  }
});

online(
  'refuses to write over a directory, and to restore what is not a whole backup or was altered',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await appendToFileLog(dataDir, [created('1', 'one'), created('2', 'two')]);
    const dest = join(dir, 'backup');
    await backup(dataDir, dest);
    const again = await reports(['backup', dest], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.equal(
      [again.code, again.stderr.trim()],
      [1, `reports backup: ${dest} exists: a backup goes into a new directory, never over another`],
    );
    const notOne = await reports(['restore', dataDir], { env: { REPORTS_DATA_DIR: join(dir, 'elsewhere') } });
    assert.match(notOne.stderr, 'is not a backup: it has no backup.json');
    await flipByte(eventsLogPath(dest), 40);
    const altered = await reports(['restore', dest], { env: { REPORTS_DATA_DIR: join(dir, 'elsewhere') } });
    assert.is(altered.code, 1);
    assert.match(altered.stderr, /CRC mismatch|does not match its manifest/);
    assert.equal(
      await readdir(join(dir, 'elsewhere')).then((names) => names.filter((name) => name.startsWith('events.log'))),
      [],
    );
  },
);

online('shows a progress bar on a terminal, as replay does', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  await appendToFileLog(
    dataDir,
    Array.from({ length: 50 }, (_, i) => created(String(i), `report ${i}`)),
  );
  const { code, stdout } = await reports(['backup', join(dir, 'backup')], {
    env: { REPORTS_DATA_DIR: dataDir },
    tty: true,
  });
  assert.is(code, 0);
  assert.match(stdout, /backup \[.*\] 100% \| 50\/50 events/);
  assert.match(stdout, /verify \[.*\] 100% \| 50\/50 events/);
});

online('on Kafka points at the topic and migrate --to-topic instead (exit 2)', async () => {
  for (const command of ['backup', 'restore']) {
    const { code, stderr } = await reports([command, '/tmp/unused'], { env: { KAFKA_BROKERS: '127.0.0.1:9092' } });
    assert.is(code, 2);
    assert.match(stderr, 'the topic is the backup');
  }
});

online.run();

/** Waits until an entry of `dir` matches `pattern`, then calls `then`. */
function whenEntryAppears(dir: string, pattern: RegExp, then: () => void): Promise<void> {
  const watcher = watch(dir);
  const seen = new Promise<void>((resolve) => {
    watcher.on('change', (_event, name) => {
      if (typeof name === 'string' && pattern.test(name)) resolve(then());
    });
  });
  return withTimeout(seen, 60_000, `an entry matching ${pattern}`).finally(() => watcher.close());
}

const killed = suite<{ dir: string }>('reports backup: killed during it');
killed.before.each(async (context) => {
  context.dir = await tempDir('reports-backup-killed-');
});
killed.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

killed(
  'a SIGKILLed backup leaves no backup; the next one to the same place removes its remains and succeeds',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    const name = 'n'.repeat(1024 * 1024);
    for (let batch = 0; batch < 4; batch += 1)
      await appendToFileLog(
        dataDir,
        Array.from({ length: 8 }, (_, i) => created(String(batch * 8 + i), name)),
      );
    // The file log's backup: nothing of a Kafka suite's environment (KAFKA_BROKERS) may reach it.
    const { KAFKA_BROKERS: _kafka, ...fileLogEnv } = process.env;
    const child = spawn(process.execPath, [CLI, 'backup', join(dir, 'backup')], {
      env: { ...fileLogEnv, REPORTS_DATA_DIR: dataDir },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await whenEntryAppears(dir, /^backup\.partial-\d+$/, () => void child.kill('SIGKILL'));
    await exited;
    const left = await readdir(dir);
    assert.not.ok(left.includes('backup'), 'no directory passes for a backup');
    assert.ok(
      left.some((entry) => /^backup\.partial-\d+$/.test(entry)),
      'the killed backup left its partial directory',
    );
    const notOne = await reports(
      ['restore', join(dir, left.find((entry) => entry.startsWith('backup.partial-')) ?? '')],
      { env: { REPORTS_DATA_DIR: join(dir, 'other') } },
    );
    assert.match(notOne.stderr, 'is not a backup');
    const taken = await backup(dataDir, join(dir, 'backup'));
    assert.equal((await readdir(dir)).sort(), ['backup', 'data']);
    assert.is(taken.digest, await logDigest(dataDir));
  },
);

killed(
  'a server SIGKILLed during the backup: the backup completes, holds only durable records, and restores to its digest',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await appendToFileLog(
      dataDir,
      Array.from({ length: 10_000 }, (_, i) => created(String(i), `report ${i}`)),
    );
    const server = await startChildServer({ REPORTS_DATA_DIR: dataDir });
    await server.waitReady(60_000);
    const writers = keepWriting(server.request);
    let taken: Printed;
    try {
      const running = reports(['backup', join(dir, 'backup')], { env: { REPORTS_DATA_DIR: dataDir } });
      await whenEntryAppears(dir, /^backup\.partial-\d+$/, () => server.kill('SIGKILL'));
      const { code, stdout, stderr } = await running;
      assert.is(code, 0, stderr);
      taken = printed(stdout);
    } finally {
      await writers.stop();
      server.kill('SIGKILL');
      await server.waitExit();
    }
    assert.ok(taken.records >= 10_000);
    assert.is(await logDigest(dataDir, taken.records), taken.digest);
    const restored = await restore(dataDir, join(dir, 'backup'));
    assert.is(restored.digest, taken.digest);
    await expectServerDigest(dataDir, taken.digest);
  },
);

killed.run();
