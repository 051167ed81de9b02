// Key writes while the disk does not answer: they settle within their timeout as appends do, and
// beyond the cap of waiting writes they are refused at once.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { AppendTimeoutError, LogOverloadedError } from '../../src/log/event-log.js';
import { rejection, withTimeout } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';
import { holdThreadPool } from './hold-thread-pool.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();

const stuck = suite<{ dir: string }>('key writes on a disk that does not answer');
stuck.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-stuck-');
});
stuck.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

stuck(
  'a write that is not durable within timeoutMs is rejected with AppendTimeoutError; one still waiting is dropped',
  async ({ dir }) => {
    const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    const held = keys.mint(digestOf('held'));
    await keys.put([held]);
    const pool = holdThreadPool(dir);
    const writing = keys.mint(digestOf('writing'));
    const waiting = keys.mint(digestOf('waiting'));
    let errors: unknown[];
    try {
      const inFlight = rejection(keys.put([writing], { timeoutMs: 50 }));
      const queued = rejection(keys.put([waiting], { timeoutMs: 50 }));
      const destroy = rejection(keys.destroy([held.id], { timeoutMs: 50 }));
      errors = await withTimeout(Promise.all([inFlight, queued, destroy]), 5000, 'the timeouts');
    } finally {
      await pool.release();
    }
    for (const error of errors) {
      assert.instance(error, AppendTimeoutError);
      assert.is((error as AppendTimeoutError).timeoutMs, 50);
    }
    await keys.close();
    // The write in flight went on; the ones still waiting never reached the disk.
    const reopened = await openFileKeyStore({ dir, logger: memoryLogger().logger });
    assert.ok((await reopened.get(writing.id))?.secret.equals(writing.secret));
    assert.ok(
      (await reopened.get(held.id))?.secret.equals(held.secret),
      'the destroy that timed out while waiting was dropped',
    );
    assert.is(reopened.slots, 2);
    await reopened.close();
  },
);

stuck(
  'beyond maxPending waiting writes, a put or a destroy is refused at once with LogOverloadedError',
  async ({ dir }) => {
    const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true, maxPending: 2 });
    const pool = holdThreadPool(dir);
    const accepted = [
      keys.put([keys.mint(digestOf('in flight'))]),
      keys.put([keys.mint(digestOf('one'))]),
      keys.destroy([keys.mint(digestOf('two')).id]),
    ];
    const refused = [keys.put([keys.mint(digestOf('three'))]), keys.destroy([keys.mint(digestOf('four')).id])].map(
      rejection,
    );
    await pool.release();
    for (const error of await Promise.all(refused)) {
      assert.instance(error, LogOverloadedError);
      assert.is((error as LogOverloadedError).maxPending, 2);
    }
    await withTimeout(Promise.all(accepted), 5000, 'the accepted writes');
    // Two keys put, and the slot of the one given up before its put written destroyed.
    assert.is(keys.slots, 3);
    await keys.close();
  },
);

stuck.run();
