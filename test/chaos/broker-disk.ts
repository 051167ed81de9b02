// A broker's disk fills: its log directory moved (once per cluster, by a clean restart) onto a small
// tmpfs of its own, then filled by a file beside the logs. Kafka takes the log directory offline at
// its next failed write and, the directory being its only one, halts: survived as a crash. Then the
// file is removed and the node started again on its logs.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KafkaCluster } from '../helpers/kafka-cluster.js';
import { fillDisk } from '../helpers/small-disk.js';

const run = promisify(execFile);
/** Room the small disk has beyond the node's logs when it is made: the writes of a few seconds. */
const HEADROOM_BYTES = 48 * 1024 * 1024;
const FILLER = 'chaos-disk-filler';

async function isMountPoint(dir: string): Promise<boolean> {
  return run('mountpoint', ['-q', dir]).then(
    () => true,
    () => false,
  );
}

/** Moves node `id`'s logs onto a small file system of their own (a clean stop and start), unless they are there already. */
export async function moveOntoSmallDisk(cluster: KafkaCluster, id: number, topics: readonly string[]): Promise<void> {
  const dataDir = cluster.dataDir(id);
  if (await isMountPoint(dataDir)) return;
  await cluster.stop(id);
  const { stdout } = await run('du', ['-sb', dataDir]);
  const used = Number(stdout.split('\t')[0]);
  const aside = await mkdtemp(join(tmpdir(), 'chaos-broker-data-'));
  try {
    await run('cp', ['-a', `${dataDir}/.`, aside]);
    await run('mount', ['-t', 'tmpfs', '-o', `size=${used + HEADROOM_BYTES}`, 'tmpfs', dataDir]);
    cluster.onClose(() => run('umount', ['-l', dataDir]).then(() => undefined));
    await run('cp', ['-a', `${aside}/.`, dataDir]);
  } finally {
    await rm(aside, { recursive: true, force: true });
  }
  await cluster.restart(id);
  await cluster.waitHealthy([...topics]);
}

/** Fills node `id`'s disk and waits (up to `timeoutMs`) for the broker to halt; whether it did. */
export async function fillBrokerDisk(cluster: KafkaCluster, id: number, timeoutMs: number): Promise<boolean> {
  await fillDisk(join(cluster.dataDir(id), FILLER));
  const deadline = performance.now() + timeoutMs;
  while (cluster.node(id).broker.isRunning() && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return !cluster.node(id).broker.isRunning();
}

/** Frees the disk again (the filler removed). */
export async function freeBrokerDisk(cluster: KafkaCluster, id: number): Promise<void> {
  const filler = join(cluster.dataDir(id), FILLER);
  if (existsSync(filler)) await rm(filler);
}
