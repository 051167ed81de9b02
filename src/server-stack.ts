// What a server opens in its data directory or log, and can open again: the event log, the key
// store, the snapshot, the projector and the app over them (server.ts keeps the tokens and the
// HTTP listener, which outlive it). When the embedded log finds its file system read-only
// (data-dir/read-only.ts) the whole of it is closed, letting go of every file so that an operator
// can unmount, check and mount the file system again; meanwhile every request but /healthz answers
// 503; once a probe file can be written there it is opened again as at a start, which checks the
// files as a start does (a torn tail cut, the key store against the log).
// The stack is wired here, in openStack; the steps it calls are in server-stack/, and
// server-stack/restartable.ts lets go of the data directory and opens it again.
import { Closers } from './closers.js';
import type { Config } from './config.js';
import { checkNewestKeyHeld } from './keys/key-upkeep.js';
import { StartUpkeep } from './keys/start-upkeep.js';
import { openKeyStore } from './keys/open-key-store.js';
import { hasResumableScan } from './log/capabilities.js';
import { openEventLog, type FileLogHooks } from './log/open-log.js';
import { ProjectionHealth, startHeadProbe } from './projector/health.js';
import { Projector } from './projector/projector.js';
import { defaultFoldThreads } from './read-model/sharded-fold.js';
import type { ReportService } from './reports/service.js';
import { createOnCaughtUp } from './server-stack/caught-up.js';
import { RestartableStack } from './server-stack/restartable.js';
import type { Stack, StackWiring, WireApp } from './server-stack/stack-types.js';
import { loadStartModel } from './server-stack/start-model.js';
import { StateDigestAtClose } from './server-stack/state-digest-at-close.js';
import { createAutoSnapshot } from './snapshot/auto-snapshot.js';
import { resumeOf } from './snapshot/snapshot-anchor.js';
import { removeStaleTemporaries } from './snapshot/snapshot-space.js';
import { readNewestSnapshot, snapshotDir } from './snapshot/snapshot-store.js';

export type { Stack, StackParts, StackWiring, WireApp } from './server-stack/stack-types.js';

async function openStack(config: Config, wiring: StackWiring, hooks: FileLogHooks, wire: WireApp): Promise<Stack> {
  const { logger, onFatal } = wiring;
  const snapshots = snapshotDir(config.dataDir);
  // Before anything is written (the lock included): on a full disk, what a dead writer left is the room.
  await removeStaleTemporaries(snapshots, logger);
  // The newest snapshot is read first: the log's start-up scan resumes where its history ends.
  const newest = await readNewestSnapshot(snapshots, logger);
  const log = await openEventLog(config, logger, newest && resumeOf(newest.snapshot), hooks);
  const closers = new Closers();
  closers.add('event log', () => log.close());
  const unwind = () =>
    closers.unwind((part, error) => logger.warn({ err: error, part }, 'could not close a part of the server'));
  try {
    const keys = await openKeyStore(log, config, logger);
    closers.add('key store', () => keys.close());
    const { model, snapshot } = await loadStartModel({ dir: snapshots, log, logger, newest });
    // A snapshot names the newest key its history refers to: a key store that never held it stops the start now.
    checkNewestKeyHeld(model, keys);
    // The keys a crash or a shutdown left undestroyed, swept once caught up (start-upkeep.ts): of
    // keys.db, the slots it holds now (keys minted from now on are never swept).
    const upkeep: StartUpkeep = new StartUpkeep(model, keys, {
      logger,
      writeTimeoutMs: config.writeTimeoutMs,
      keySweepDelayMs: config.kafka?.keySweepDelayMs ?? 0,
      current: async () => projector.reach(await log.head(), config.writeTimeoutMs),
      ...(snapshot?.unerased ? { unerasedInSnapshot: snapshot.unerased } : {}),
    });
    // Opened at the newest snapshot's resume point but folding from before it: scan that part now,
    // so damage there stops the start as at any open.
    if (hasResumableScan(log)) await log.scanFrom(model.cursor);
    // At close, once the projector has stopped and before the key store closes: the digest of what
    // this instance folded, with the keys it holds (never waiting on a broker at shutdown); a key
    // store that failed (closed with a failed log) gives none.
    const digestAtClose = new StateDigestAtClose(model, keys, logger);
    closers.add('state digest', () => digestAtClose.take());
    const autoSnapshot = createAutoSnapshot({
      dir: snapshots,
      log,
      logger,
      model,
      every: config.snapshotEvery,
      unerased: () => wired.service?.unconfirmedDeletions() ?? [],
    });
    const health = new ProjectionHealth(config.projectionStallMs);
    // The service exists once the app is wired, after the projector starts; it is asked for nothing before it caught up.
    const wired: { service?: ReportService } = {};
    const { beforeReady, onCaughtUp } = createOnCaughtUp({ model, keys, logger, onFatal, upkeep, autoSnapshot });
    const projector: Projector = new Projector({
      log,
      logger,
      model,
      health,
      foldThreads: defaultFoldThreads(),
      onApplied: (records) => autoSnapshot.onApplied(records),
      beforeReady,
      onCaughtUp,
      onErased: (ended) => wired.service?.eraseLater(ended),
      ...(upkeep.onEndedInCatchUp ? { onEndedInCatchUp: upkeep.onEndedInCatchUp } : {}),
    });
    projector.start();
    closers.add('projector', async () => {
      await projector.stop();
      await autoSnapshot.idle();
      await upkeep.close();
    });
    closers.add(
      'head probe',
      startHeadProbe({
        health,
        head: () => log.head(),
        projected: () => model.cursor,
        intervalMs: Math.min(1000, Math.max(25, Math.floor(config.projectionStallMs / 4))),
      }),
    );
    const { logger: _logger, onFatal: _onFatal, ...shared } = wiring;
    const { app, service, feeds } = wire({ ...shared, logger, log, keys, projector });
    wired.service = service;
    upkeep.wired(service, feeds);
    closers.add('report service', () => service.stop());
    // Closed first: each feed is ended with a last line saying where to resume (after a let-go too).
    closers.add('feeds', () => feeds.close());
    // Koa's handler answers every failure itself (ctx.onerror): its promise never rejects.
    const koaHandle = app.callback();
    return {
      log,
      keys,
      projector,
      feeds,
      handle: (req, res) => void koaHandle(req, res),
      close: async ({ digest: asked }) => {
        digestAtClose.want(asked);
        // Everything is closed whatever fails; then a failure (the log's last write, say) is the caller's.
        const failure = await unwind();
        if (failure !== undefined) throw failure;
        return digestAtClose.taken();
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/** The stack server.ts opens, and opens again after a read-only spell: each time by openStack. */
export class Restartable extends RestartableStack {
  constructor(config: Config, wiring: StackWiring, wire: WireApp) {
    super(config, wiring, (hooks) => openStack(config, wiring, hooks, wire));
  }
}
