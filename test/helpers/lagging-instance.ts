// An instance of the service that learns of other instances' writes as late as it may: its log's
// follow holds back every record of a partition until this instance appends to that partition
// (then everything before its own record comes through, as it must for read-your-writes) or reads
// the partition's head (as it does before an answer that writes nothing). So every decision it
// takes is made on the stalest state the service allows, and a test of what a client hopping
// between instances is answered does not depend on timing luck. Its own writes still reach its
// model at once through the log's commit hand-off when nothing is held before them.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { rm } from 'node:fs/promises';
import { loadConfig, type Env } from '../../src/config.js';
import type {
  AppendOptions,
  Cursor,
  EventLog,
  LogMessage,
  LogPosition,
  LogRecord,
  ReadOptions,
} from '../../src/log/event-log.js';
import { hasKeyedHeads } from '../../src/log/capabilities.js';
import { openEventLog } from '../../src/log/open-log.js';
import { Projector } from '../../src/projector/projector.js';
import { createWiredApp } from '../../src/server.js';
import { openKeyStore } from '../../src/keys/open-key-store.js';
import { memoryLogger, tempDir, TEST_TOKEN } from './server.js';
import { requestTo, type TestRequest } from './request.js';
import { testTokens } from './token.js';

export interface LaggingInstance {
  readonly request: TestRequest;
  readonly projector: Projector;
  /** The instance's log (its follow held as described above). */
  readonly log: EventLog;
  /** From now on, records of others come through only as described above. */
  hold(): void;
  /** The /metrics text. */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/** The follow of a log, with records held back past a horizon per partition that only moves forward. */
class HeldFollow {
  private held = false;
  private readonly horizon = new Map<number, number>();
  private readonly wakers = new Set<() => void>();

  hold(cursor: Cursor): void {
    for (const [partition, offset] of cursor) this.horizon.set(partition, offset);
    this.held = true;
  }

  /** Lets every record before `cursor` through. */
  release(cursor: Cursor): void {
    for (const [partition, offset] of cursor)
      this.horizon.set(partition, Math.max(offset, this.horizon.get(partition) ?? 0));
    for (const wake of [...this.wakers]) wake();
  }

  private passes({ position }: LogRecord): boolean {
    return !this.held || position.offset < (this.horizon.get(position.partition) ?? 0);
  }

  async *follow(batches: AsyncIterable<readonly LogRecord[]>): AsyncIterable<readonly LogRecord[]> {
    const pending: LogRecord[] = [];
    let wake: (() => void) | undefined;
    const waker = () => wake?.();
    this.wakers.add(waker);
    let ended = false;
    let failure: Error | undefined;
    void (async () => {
      try {
        for await (const batch of batches) {
          pending.push(...batch);
          waker();
        }
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
      } finally {
        ended = true;
        waker();
      }
    })();
    try {
      for (;;) {
        // A held record holds back the later ones of its partition (they come in offset order).
        const blocked = new Set<number>();
        const through = pending.filter((record) => {
          const passes = !blocked.has(record.position.partition) && this.passes(record);
          if (!passes) blocked.add(record.position.partition);
          return passes;
        });
        if (through.length > 0) {
          pending.splice(0, pending.length, ...pending.filter((record) => !through.includes(record)));
          yield through;
          continue;
        }
        if (ended) {
          if (failure !== undefined) throw failure;
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      this.wakers.delete(waker);
    }
  }
}

/** `log` whose follow is held as described above, with the control of the hold. */
function heldLog(log: EventLog, held: HeldFollow): EventLog {
  const positions = (found: readonly LogPosition[]): Cursor =>
    new Map(found.map(({ partition, offset }) => [partition, offset + 1]));
  const wrapped: Record<string, unknown> = {
    followBatches: (from: Cursor, options?: ReadOptions) => held.follow(log.followBatches(from, options)),
    append: async (messages: readonly LogMessage[], options?: AppendOptions) => {
      const found = await log.append(messages, options);
      held.release(positions(found));
      return found;
    },
  };
  if (hasKeyedHeads(log)) {
    wrapped['latest'] = async (key: string) => {
      const head = await log.latest(key);
      held.release(head);
      return head;
    };
  }
  return Object.assign(Object.create(log) as EventLog, wrapped);
}

/** An instance of the service on `env`'s log (Kafka) on 127.0.0.1:0; its follow is held once `hold()` is called. */
export async function startLaggingInstance(env: Env): Promise<LaggingInstance> {
  const dataDir = await tempDir('reports-lagging-');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    REPORTS_TOKENS: TEST_TOKEN,
    REPORTS_DATA_DIR: dataDir,
    REPORTS_SNAPSHOT_EVERY: '0',
    ...env,
  });
  const { logger } = memoryLogger();
  const held = new HeldFollow();
  const log = heldLog(await openEventLog(config, logger), held);
  const projector = new Projector({ log, logger, retryDelayMs: 50 });
  projector.start();
  await projector.caughtUp();
  const keys = await openKeyStore(log, config, logger);
  const { app, service } = createWiredApp(config, { log, keys, projector, logger, tokens: testTokens() });
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const request = requestTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    request,
    projector,
    log,
    hold: () => held.hold(projector.model.cursor),
    metrics: async () => (await request('/metrics', { token: null })).text(),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      service.stop();
      await projector.stop();
      await keys.close();
      await log.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
