// The clients of a fault run, all at once until stopped: unique creates on every instance; racing
// creates of one id with a different body on each instance; reports created and deleted over and
// over through random instances, a client retrying a write that got no acknowledgement on another
// instance (as a 503 invites); clients that hop, sending each request of a report's script through
// the next instance in turn as a load balancer would; and a /readyz poller per instance.
import { unknownOutcome, type Purpose, type RequestRecord, type WriteOp } from './history.js';
import type { Recorder } from './recorder.js';

export interface WorkloadOptions {
  readonly recorder: Recorder;
  readonly instances: readonly string[];
  /** The instances the clients write through (default: all). */
  readonly writeThrough?: readonly string[];
  /** Whether an instance is running now (a client does not write to one it knows is down). */
  readonly isUp: (instance: string) => boolean;
  readonly uniqueWorkersPerInstance: number;
  /** Ids created and deleted in turn, each by one client. */
  readonly cycleIds: number;
  /** Clients running HOP_SCRIPT on one new id after another. */
  readonly hopClients: number;
  readonly raceEveryMs: number;
  /** Each client's pause between requests. */
  readonly thinkMs: number;
  readonly pollEveryMs?: number;
}

export interface RunningWorkload {
  /** Stops starting requests and waits for those in flight. */
  stop(): Promise<void>;
}

/** Id ranges per purpose: a fresh topic per run, so plain numbers will do. */
export const ID_BASE: Readonly<Record<Purpose, number>> = {
  unique: 1_000_000,
  race: 2_000_000,
  cycle: 3_000_000,
  script: 4_000_000,
  hop: 5_000_000,
};

/**
 * What a hopping client sends for each report, in turn, each request through the next instance and
 * after the previous answer: create, delete, create with a new body, delete, create with another,
 * an identical retry, and another body (a 409 when nothing failed).
 */
export const HOP_SCRIPT: readonly { readonly op: WriteOp; readonly name?: string }[] = [
  { op: 'create', name: 'first' },
  { op: 'delete' },
  { op: 'create', name: 'second' },
  { op: 'delete' },
  { op: 'create', name: 'third' },
  { op: 'create', name: 'third' },
  { op: 'create', name: 'other' },
];

/** How long a cycling client retries one write before it moves on. */
const RETRY_FOR_MS = 30_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function pick<T>(items: readonly T[]): T | undefined {
  return items[Math.floor(Math.random() * items.length)];
}

export function startWorkload(options: WorkloadOptions): RunningWorkload {
  let stopped = false;
  const running = (): boolean => !stopped;
  const loops: Promise<void>[] = [];
  let uniqueNext = ID_BASE.unique;
  const through = options.writeThrough ?? options.instances;
  for (const instance of options.instances) {
    for (let i = 0; i < (through.includes(instance) ? options.uniqueWorkersPerInstance : 0); i += 1) {
      loops.push(
        repeat(running, options, async () => {
          if (options.isUp(instance))
            await options.recorder.send({
              op: 'create',
              id: String(uniqueNext++),
              name: `unique via ${instance}`,
              instance,
              purpose: 'unique',
            });
        }),
      );
    }
    loops.push(
      repeat(running, { ...options, thinkMs: options.pollEveryMs ?? 250 }, () => options.recorder.poll(instance)),
    );
  }
  const writers = { ...options, instances: through };
  for (let i = 0; i < options.cycleIds; i += 1) loops.push(cycle(running, writers, String(ID_BASE.cycle + i)));
  let hopNext = ID_BASE.hop;
  for (let i = 0; i < options.hopClients; i += 1) loops.push(hop(running, writers, i, () => String(hopNext++)));
  let raceNext = ID_BASE.race;
  loops.push(
    repeat(running, { ...options, thinkMs: options.raceEveryMs }, async () => {
      const id = String(raceNext++);
      const up = through.filter(options.isUp);
      await Promise.all(
        up.map((instance) =>
          options.recorder.send({ op: 'create', id, name: `race ${id} via ${instance}`, instance, purpose: 'race' }),
        ),
      );
    }),
  );
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

async function repeat(
  running: () => boolean,
  { thinkMs }: { thinkMs: number },
  step: () => Promise<void>,
): Promise<void> {
  while (running()) {
    await step();
    await sleep(thinkMs);
  }
}

/** One client creating and deleting `id` in turn; what it believes of the id follows the answers. */
async function cycle(running: () => boolean, options: WorkloadOptions, id: string): Promise<void> {
  let exists = false;
  let version = 0;
  while (running()) {
    const op: WriteOp = exists ? 'delete' : 'create';
    if (op === 'create') version += 1;
    const answer = await untilSettled(running, options, {
      op,
      id,
      ...(op === 'create' ? { name: `cycle ${id} v${version}` } : {}),
    });
    // 200 or 409 (another version is there): it exists; 204 or 404: it does not.
    if (answer !== undefined) exists = answer.status === 200 || answer.status === 409;
    await sleep(options.thinkMs);
  }
}

/** One client running HOP_SCRIPT on new ids, each request through the next instance that is up. */
async function hop(
  running: () => boolean,
  options: WorkloadOptions,
  client: number,
  nextId: () => string,
): Promise<void> {
  let turn = client;
  while (running()) {
    const id = nextId();
    for (const step of HOP_SCRIPT) {
      if (!running()) return;
      const up = options.instances.filter(options.isUp);
      const instance = up[turn++ % Math.max(1, up.length)];
      if (instance === undefined) {
        await sleep(200);
        continue;
      }
      await options.recorder.send({
        op: step.op,
        id,
        ...(step.name === undefined ? {} : { name: step.name }),
        instance,
        purpose: 'hop',
      });
    }
    await sleep(options.thinkMs);
  }
}

/** Sends the write until an answer settles it, each retry through another instance. */
async function untilSettled(
  running: () => boolean,
  options: WorkloadOptions,
  write: { op: WriteOp; id: string; name?: string },
): Promise<RequestRecord | undefined> {
  const deadline = Date.now() + RETRY_FOR_MS;
  let previous: string | undefined;
  while (running() && Date.now() < deadline) {
    const instance =
      pick(options.instances.filter((name) => options.isUp(name) && name !== previous)) ??
      pick(options.instances.filter(options.isUp));
    if (instance === undefined) {
      await sleep(200);
      continue;
    }
    const answer = await options.recorder.send({ ...write, instance, purpose: 'cycle' });
    if (!unknownOutcome(answer)) return answer;
    previous = instance;
    await sleep(Math.max(100, options.thinkMs));
  }
  return undefined;
}
