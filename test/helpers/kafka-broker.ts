/**
 * A real, private Kafka broker for tests that need to stop, kill, pause and restart it
 * (fault tests). Wraps test/broker/kafka-broker.sh: each broker has its own name, ports and
 * state dir (.cache/kafka/run/<name>/), so it never disturbs the shared test broker that
 * test/broker/with-kafka.sh starts on 19092.
 *
 *   if (!kafkaAvailable()) { ...skip (or fail when CI=true)... }
 *   const broker = await startBroker({ name: 'fault-restart', port: 29092, controllerPort: 29093, saslPort: 29094, fresh: true });
 *   // new Kafka({ brokers: [broker.brokers] }) ...
 *   await broker.stop();   // clean shutdown (SIGTERM), data kept
 *   await broker.start();  // same data, same ports
 *   await broker.stop();
 *
 * Any broker still running when the Node process exits normally, or on SIGINT/SIGTERM, is stopped
 * by an exit hook; with `watch`, even a process killed outright leaves no broker behind.
 * Use distinct ports per broker; a port already in use makes startBroker() reject. A suite's own
 * broker is best started with startOwnBroker (free ports, a name no other run shares).
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface KafkaBrokerOptions {
  /** State dir .cache/kafka/run/<name>/; letters, digits, '.', '_', '-'. */
  name: string;
  /** PLAINTEXT listener on 127.0.0.1. */
  port: number;
  /** KRaft controller listener on 127.0.0.1. */
  controllerPort: number;
  /** SASL_PLAINTEXT (PLAIN) listener on 127.0.0.1. */
  saslPort: number;
  /** Wipe the data dir before the first start (stops a leftover broker of that name first). */
  fresh?: boolean;
  /** Extra environment for kafka-broker.sh, e.g. { KAFKA_AUTO_CREATE_TOPICS: 'true' }. */
  env?: Readonly<Record<string, string>>;
  /**
   * What the exit hook does with the broker if it is still running: 'stop' (clean shutdown, the
   * default) or 'kill' (SIGKILL: quicker, for throw-away data such as a cluster's nodes, whose
   * clean shutdowns wait on each other).
   */
  onExit?: 'stop' | 'kill';
  /** SIGKILL the broker as soon as this process is gone, however it ended (KAFKA_WATCH_PID). */
  watch?: boolean;
}

export interface KafkaSaslPlain {
  mechanism: 'plain';
  username: string;
  password: string;
}

export interface KafkaBroker {
  readonly name: string;
  /** '127.0.0.1:<port>' (PLAINTEXT). */
  readonly brokers: string;
  /** '127.0.0.1:<saslPort>' (SASL_PLAINTEXT). */
  readonly saslBrokers: string;
  /** Credentials accepted on saslBrokers (kafkajs `sasl` option). */
  readonly sasl: KafkaSaslPlain;
  /** Clean shutdown (SIGTERM, SIGKILL after 30 s). Resolves when the process is gone. */
  stop(): Promise<void>;
  /** Start again on the same data dir and ports; resolves once the broker answers. */
  start(): Promise<void>;
  /** Crash: SIGKILL, no clean shutdown. start() afterwards recovers the logs. */
  kill(): Promise<void>;
  /** Freeze the JVM (SIGSTOP): connections stay open but nothing answers. */
  pause(): void;
  /** Undo pause() (SIGCONT). */
  resume(): void;
  /** True when the broker process is alive (it may be paused). */
  isRunning(): boolean;
}

/** The project root: the nearest ancestor holding test/broker/kafka-broker.sh (works from dist/ and from source). */
function findProjectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'test', 'broker', 'kafka-broker.sh'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error(
        'kafka-broker harness: cannot find test/broker/kafka-broker.sh above ' + fileURLToPath(import.meta.url),
      );
    dir = parent;
  }
}

const ROOT = findProjectRoot();
const SCRIPT = path.join(ROOT, 'test', 'broker', 'kafka-broker.sh');
const RUN_ROOT = path.join(ROOT, '.cache', 'kafka', 'run');

/** Where the broker named `name` keeps its state (data/, logs/, kafka.pid). */
export function brokerRunDir(name: string): string {
  return path.join(RUN_ROOT, name);
}

function onPath(command: string): boolean {
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter((d) => d !== '');
  return dirs.some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function javaAvailable(): boolean {
  const javaHome = process.env['JAVA_HOME'];
  if (javaHome !== undefined && javaHome !== '') {
    try {
      accessSync(path.join(javaHome, 'bin', 'java'), constants.X_OK);
      return true;
    } catch {
      // fall through to PATH
    }
  }
  return onPath('java');
}

/**
 * True when this machine can run a local broker: java on PATH (or JAVA_HOME), and mvn on PATH
 * or the broker jars already cached in .cache/kafka/libs.
 */
export function kafkaAvailable(): boolean {
  if (!javaAvailable()) return false;
  if (onPath('mvn')) return true;
  return spawnSync('bash', [SCRIPT, 'has-libs'], { stdio: 'ignore' }).status === 0;
}

function validatePort(label: string, port: number): void {
  if (!Number.isInteger(port) || port <= 0 || port >= 65536)
    throw new Error(`kafka-broker harness: invalid ${label} ${port}`);
}

interface ScriptResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

function runScript(command: 'up' | 'down', env: NodeJS.ProcessEnv): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [SCRIPT, command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const verbose = process.env['KAFKA_BROKER_VERBOSE'] === '1';
    const collect = (chunk: Buffer): void => {
      chunks.push(chunk);
      if (verbose) process.stderr.write(chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

const running = new Map<string, () => void>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const stopSync of running.values()) stopSync();
  });
  // Node's default for these signals ends the process without 'exit': the brokers (in sessions of
  // their own) would outlive it. Exit with the status the signal would have given.
  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => process.exit(status));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Alive and not a zombie (an exited broker whose parent, init, has not reaped it yet). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no procfs (macOS): kill(pid, 0) is all there is
  }
}

class LocalKafkaBroker implements KafkaBroker {
  readonly name: string;
  readonly brokers: string;
  readonly saslBrokers: string;
  readonly sasl: KafkaSaslPlain;
  private readonly env: NodeJS.ProcessEnv;
  private readonly pidFile: string;
  private readonly onExit: 'stop' | 'kill';

  constructor(opts: KafkaBrokerOptions) {
    if (!/^[A-Za-z0-9._-]+$/.test(opts.name)) throw new Error(`kafka-broker harness: invalid name '${opts.name}'`);
    validatePort('port', opts.port);
    validatePort('controllerPort', opts.controllerPort);
    validatePort('saslPort', opts.saslPort);
    this.name = opts.name;
    this.brokers = `127.0.0.1:${opts.port}`;
    this.saslBrokers = `127.0.0.1:${opts.saslPort}`;
    this.env = {
      ...process.env,
      ...opts.env,
      KAFKA_BROKER_NAME: opts.name,
      KAFKA_PORT: String(opts.port),
      KAFKA_CONTROLLER_PORT: String(opts.controllerPort),
      KAFKA_SASL_PORT: String(opts.saslPort),
      KAFKA_BROKER_FRESH: '0',
      ...(opts.watch === true ? { KAFKA_WATCH_PID: String(process.pid) } : {}),
    };
    this.onExit = opts.onExit ?? 'stop';
    this.sasl = {
      mechanism: 'plain',
      username: this.env['KAFKA_SASL_TEST_USER'] ?? 'reports',
      password: this.env['KAFKA_SASL_TEST_PASSWORD'] ?? 'reports-secret',
    };
    this.pidFile = path.join(RUN_ROOT, opts.name, 'kafka.pid');
  }

  async up(fresh: boolean): Promise<void> {
    const result = await runScript('up', { ...this.env, KAFKA_BROKER_FRESH: fresh ? '1' : '0' });
    if (result.code !== 0) {
      running.delete(this.name);
      throw new Error(
        `kafka broker '${this.name}' did not start (exit ${result.code ?? result.signal}):\n${result.output}`,
      );
    }
    running.set(this.name, () => {
      this.resumeQuietly();
      if (this.onExit === 'kill') this.killQuietly();
      spawnSync('bash', [SCRIPT, 'down'], { cwd: ROOT, env: this.env, stdio: 'ignore' });
    });
    installExitHook();
  }

  start(): Promise<void> {
    return this.up(false);
  }

  async stop(): Promise<void> {
    this.resumeQuietly();
    const result = await runScript('down', this.env);
    running.delete(this.name);
    if (result.code !== 0) {
      throw new Error(
        `kafka broker '${this.name}' did not stop (exit ${result.code ?? result.signal}):\n${result.output}`,
      );
    }
  }

  async kill(): Promise<void> {
    const pid = this.pid();
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      const deadline = Date.now() + 10_000;
      while (alive(pid) && Date.now() < deadline) await sleep(50);
      if (alive(pid)) throw new Error(`kafka broker '${this.name}' (pid ${pid}) survived SIGKILL`);
    }
    // Clears the stale pid file (and reports "not running").
    await runScript('down', this.env);
    running.delete(this.name);
  }

  pause(): void {
    const pid = this.requirePid();
    process.kill(pid, 'SIGSTOP');
    // kill() only queues the signal: on a loaded machine the broker's threads may still answer a
    // request sent in the next moment. Return once the kernel reports the process stopped.
    const deadline = Date.now() + 5_000;
    while (!isStopped(pid)) {
      if (Date.now() > deadline) {
        // Not left half-stopped: the suites that follow would wait on a broker nobody resumes.
        process.kill(pid, 'SIGCONT');
        throw new Error(`kafka broker '${this.name}' (pid ${pid}) did not stop on SIGSTOP`);
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }

  resume(): void {
    const pid = this.requirePid();
    process.kill(pid, 'SIGCONT');
  }

  isRunning(): boolean {
    const pid = this.pid();
    return pid !== undefined && alive(pid);
  }

  private killQuietly(): void {
    const pid = this.pid();
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // not running
    }
  }

  private resumeQuietly(): void {
    const pid = this.pid();
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // not running
    }
  }

  private pid(): number | undefined {
    let text: string;
    try {
      text = readFileSync(this.pidFile, 'utf8').trim();
    } catch {
      return undefined;
    }
    const pid = Number(text);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  private requirePid(): number {
    const pid = this.pid();
    if (pid === undefined || !alive(pid)) throw new Error(`kafka broker '${this.name}' is not running`);
    return pid;
  }
}

/**
 * Starts (fetching the jars and formatting storage when needed) a broker and resolves once it
 * answers on 127.0.0.1:<port>. Rejects with the broker's log tail when it does not start.
 */
export async function startBroker(opts: KafkaBrokerOptions): Promise<KafkaBroker> {
  const broker = new LocalKafkaBroker(opts);
  await broker.up(opts.fresh === true);
  return broker;
}

/** `count` ports free on 127.0.0.1 now (each found by listening on port 0). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** True when no thread of `pid` can run its own code any more (state T in /proc/<pid>/task/<tid>/stat); true off Linux, where there is no /proc to ask. */
function isStopped(pid: number): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return tasks.every((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const state = stat.charAt(stat.lastIndexOf(')') + 2); // the name in parentheses may hold anything
      // Stopped, ending, or in the kernel (D: it stops on its way out, before it runs any of its own code).
      return 'TtZXD'.includes(state);
    } catch {
      return true; // the thread ended
    }
  });
}

/**
 * A fresh broker of one suite's own (to stop, pause or kill) on free ports, named `name` and this
 * process's pid: test runs side by side (CI runs two Node versions at once) must never share one,
 * or one run's fault lands on the other's broker. `removeOwnBroker` stops it and deletes its state.
 */
export async function startOwnBroker(
  name: string,
  opts: Omit<KafkaBrokerOptions, 'name' | 'port' | 'controllerPort' | 'saslPort' | 'fresh'> = {},
): Promise<KafkaBroker> {
  for (let attempt = 1; ; attempt += 1) {
    const [port, controllerPort, saslPort] = (await freePorts(3)) as [number, number, number];
    try {
      return await startBroker({
        ...opts,
        name: `${name}-${process.pid}`,
        port,
        controllerPort,
        saslPort,
        fresh: true,
      });
    } catch (error) {
      // The ports are found free before the broker binds them: another process may take one in
      // between (CI saw "Address already in use" once). Tried again on other ports.
      if (attempt >= 3 || !String((error as Error).message).includes('Address already in use')) throw error;
    }
  }
}

/** Stops (or kills: quicker, for throw-away data) a broker of startOwnBroker's, and deletes its run directory (its data and logs). */
export async function removeOwnBroker(broker: KafkaBroker | undefined, how: 'stop' | 'kill' = 'stop'): Promise<void> {
  if (broker === undefined) return;
  await (how === 'kill' ? broker.kill() : broker.stop());
  rmSync(brokerRunDir(broker.name), { recursive: true, force: true });
}
