// The service instances of a fault run: child processes (`node dist/src/main.js`) on one topic of
// the cluster, each with a data directory of its own. They can be killed and restarted; at the end
// each is caught up with the whole topic and stopped cleanly, and what it logged at its stop (its
// position and state digest) is what the checker compares.
import { chown, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { tempDir } from '../helpers/server.js';
import type { InstanceStop } from './history.js';

const ORPHAN_GUARD = fileURLToPath(new URL('./orphan-guard.js', import.meta.url));

export interface InstancesOptions {
  readonly names: readonly string[];
  /** Names among `names` a scenario starts itself, later (startLate). */
  readonly deferred?: readonly string[];
  readonly brokers: string;
  readonly topic: string;
  readonly writeTimeoutMs: number;
  readonly partitions: number;
  /** More environment for some instances (a wall clock that jumps: ../helpers/faketime.ts). */
  readonly extraEnv?: (name: string) => Readonly<Record<string, string>>;
  /** The user an instance runs as, when not this process's (so nftables can tell its packets apart). */
  readonly userOf?: (name: string) => { readonly uid: number; readonly gid: number } | undefined;
}

interface Running {
  readonly dataDir: string;
  server: ChildServer | undefined;
}

/** The summed projected offset an instance reports in /metrics (reports_projected_offset). */
async function projectedOffset(server: ChildServer): Promise<number> {
  // Bounded: an instance that never answers must fail waitCaughtUp at its deadline, not hold it.
  const response = await server.request('/metrics', { token: null, signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  const match = /^reports_projected_offset (\d+)$/m.exec(text);
  return match ? Number(match[1]) : -1;
}

export class Instances {
  private readonly running = new Map<string, Running>();
  /** A run that ends abruptly (a failed assertion, a signal) must not leave instances behind. */
  private readonly killAll = () => {
    for (const { server } of this.running.values()) server?.kill('SIGKILL');
  };

  private constructor(private readonly options: InstancesOptions) {
    process.once('exit', this.killAll);
  }

  /** Starts the first instance alone (it creates the topic), then the others at once. */
  static async start(options: InstancesOptions): Promise<Instances> {
    const instances = new Instances(options);
    const [first, ...rest] = options.names.filter((name) => !(options.deferred ?? []).includes(name));
    try {
      if (first !== undefined) await instances.launch(first);
      await Promise.all(rest.map((name) => instances.launch(name)));
    } catch (error) {
      await instances.dispose();
      throw error;
    }
    return instances;
  }

  /** Starts an instance that was deferred: a fresh process with fresh metadata. */
  startLate(name: string): Promise<void> {
    if (this.running.has(name)) throw new Error(`instance ${name} has been started already`);
    return this.launch(name);
  }

  url(name: string): string | undefined {
    const server = this.running.get(name)?.server;
    return server === undefined || server.exited() ? undefined : server.url;
  }

  /** What an instance logged so far (empty when it is not running). */
  lines(name: string): readonly Record<string, unknown>[] {
    return this.running.get(name)?.server?.lines() ?? [];
  }

  /** Start failures seen (and retried): a finding in themselves. */
  readonly startFailures: string[] = [];

  private async launch(name: string): Promise<void> {
    const user = this.options.userOf?.(name);
    const dataDir = this.running.get(name)?.dataDir ?? (await tempDir(`chaos-${name}-`));
    if (user !== undefined) await chown(dataDir, user.uid, user.gid);
    const entry: Running = { dataDir, server: undefined };
    this.running.set(name, entry);
    // A start right after the cluster healed can fail (the service gives up on a topic whose
    // metadata has not reached every broker yet): noted, and tried again as an operator would.
    for (let attempt = 1; ; attempt += 1) {
      try {
        // A start may wait for a broker to answer (KAFKA_START_TIMEOUT_MS) before it listens.
        entry.server = await startChildServer(this.env(dataDir, name), {
          nodeArgs: ['--import', ORPHAN_GUARD],
          startTimeoutMs: 90_000,
          ...(user === undefined ? {} : { user: { uid: user.uid, gid: user.gid } }),
        });
        await entry.server.waitReady(60_000);
        return;
      } catch (error) {
        entry.server?.kill('SIGKILL');
        const message = error instanceof Error ? error.message : String(error);
        this.startFailures.push(`instance ${name} did not start (attempt ${attempt}): ${message.split('\n')[0] ?? ''}`);
        if (attempt === 3) throw error;
      }
    }
  }

  private env(dataDir: string, name: string): Record<string, string> {
    return {
      KAFKA_BROKERS: this.options.brokers,
      REPORTS_TOPIC: this.options.topic,
      REPORTS_TOPIC_PARTITIONS: String(this.options.partitions),
      REPORTS_TOPIC_REPLICATION_FACTOR: '3',
      REPORTS_WRITE_TIMEOUT_MS: String(this.options.writeTimeoutMs),
      REPORTS_DATA_DIR: dataDir,
      KAFKA_CLIENT_ID: `chaos-${name}`,
      // Which instance wrote an event, for the checks of what a scenario did to one instance.
      REPORTS_EVENT_SOURCE: `urn:report-store:chaos-${name}`,
      ...this.options.extraEnv?.(name),
    };
  }

  /** SIGKILL: requests in flight get no answer. */
  async kill(name: string): Promise<void> {
    const server = this.running.get(name)?.server;
    if (server === undefined) return;
    server.kill('SIGKILL');
    await server.waitExit();
  }

  /** Starts the instance again on its data directory; resolves once /readyz answers 200. */
  restart(name: string): Promise<void> {
    return this.launch(name);
  }

  /** Waits until every instance has folded `end` records (the topic's end, summed over partitions). */
  async waitCaughtUp(end: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const [name, { server }] of this.running) {
      if (server === undefined) continue;
      let reached = -1;
      while ((reached = await projectedOffset(server).catch(() => -1)) < end) {
        if (Date.now() > deadline) {
          const last = server
            .lines()
            .slice(-6)
            .map((line) => `  ${JSON.stringify(line).slice(0, 400)}`)
            .join('\n');
          throw new Error(
            `instance ${name} folded ${reached} of ${end} records within ${timeoutMs} ms (-1: /metrics did not answer); its last lines:\n${last}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** SIGTERM to every instance at once; what each logged as it stopped. */
  async stopAll(): Promise<InstanceStop[]> {
    return Promise.all([...this.running.keys()].map((name) => this.stop(name)));
  }

  private async stop(name: string): Promise<InstanceStop> {
    const server = this.running.get(name)?.server;
    if (server === undefined || server.exited()) throw new Error(`instance ${name} is not running`);
    server.kill('SIGTERM');
    const line = await server.waitForLine(
      (logged) => logged['msg'] === 'stopped',
      `instance ${name}'s "stopped" line`,
      30_000,
    );
    await server.waitExit(30_000);
    const logDir = process.env['CHAOS_LOGS'];
    if (logDir !== undefined && logDir !== '') {
      await mkdir(logDir, { recursive: true });
      await writeFile(
        join(logDir, `${this.options.topic}-${name}.jsonl`),
        server
          .lines()
          .map((logged) => JSON.stringify(logged))
          .join('\n') + '\n',
      );
      await writeFile(join(logDir, `${this.options.topic}-${name}.stderr`), server.stderr());
    }
    return { instance: name, position: String(line['position']), digest: String(line['digest']) };
  }

  /** Kills whatever still runs and removes the data directories. */
  async dispose(): Promise<void> {
    this.killAll();
    process.off('exit', this.killAll);
    await Promise.all([...this.running.values()].map(({ dataDir }) => rm(dataDir, { recursive: true, force: true })));
  }
}
