// What a key store group commit costs, and which way of making slots durable is cheaper:
// `node dist/test/bench/key-store-sync.js [DIR]` (a temporary directory under DIR, by default the
// system's; use the data directory's disk). Each line compares ways in alternate rounds, so that
// every way meets the same disk and the same neighbours on a shared machine; it prints the median
// and 90th percentile of each:
//   - put of 1, 30 and 300 keys through the store (one run at the end, one O_DSYNC write),
//     against the same run written then fdatasynced without the store, and through an O_DSYNC
//     descriptor (as the event log writes);
//   - destroy of 30 keys scattered over 100,000 through the store (30 writes at once, then one
//     fdatasync) against 30 writes through an O_DSYNC descriptor, at once and in turn.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openFileKeyStore, type FileKeyStore } from '../../src/keys/file-key-store.js';
import { encodeSlot, keyIdOfSlot, SLOT_BYTES, slotOfKeyId, slotPosition, SlotState } from '../../src/keys/key-slots.js';
import type { ContentKey } from '../../src/keys/key-store.js';
import { writeThenSync } from '../../src/keys/slot-writes.js';
import { openDurable, type DurableFile } from '../../src/data-dir/durable-write.js';

const ROUNDS = 41;
const FILLED_SLOTS = 100_000;
const SCATTERED = 30;

type Way = (round: number) => Promise<void>;

/** Runs the ways in turn, ROUNDS times each; the median and p90 of each, in milliseconds. */
async function alternate(ways: Record<string, Way>): Promise<string> {
  const times = new Map(Object.keys(ways).map((name) => [name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, way] of Object.entries(ways)) {
      const started = process.hrtime.bigint();
      await way(round);
      times.get(name)?.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  return [...times].map(([name, ms]) => `${name} ${summary(ms)}`).join('; ');
}

function summary(ms: number[]): string {
  ms.sort((a, b) => a - b);
  const at = (share: number) => (ms[Math.min(ms.length - 1, Math.floor(share * ms.length))] as number).toFixed(2);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms`;
}

async function putKeys(store: FileKeyStore, count: number): Promise<ContentKey[]> {
  const keys = Array.from({ length: count }, () => store.mint(randomBytes(32)));
  await store.put(keys);
  return keys;
}

/** `count` distinct slots picked at random from `slots` (taken out of it). */
function pick(slots: number[], count: number): number[] {
  return Array.from({ length: count }, () => slots.splice(Math.floor(Math.random() * slots.length), 1)[0] as number);
}

async function compare(
  store: FileKeyStore,
  copy: { readonly dsync: DurableFile; readonly plain: FileHandle },
  live: number[],
): Promise<void> {
  const destroyed = encodeSlot(SlotState.destroyed);
  for (const count of [1, 30, 300]) {
    // Minted before the clock starts: the put and its sync are measured, not the random secrets.
    const minted = Array.from({ length: ROUNDS }, () =>
      Array.from({ length: count }, () => store.mint(randomBytes(32))),
    );
    // The raw runs go to the end of a copy of keys.db, so both files grow alike.
    let end = (await copy.plain.stat()).size;
    const nextRun = () => {
      const run = { slot: (end - slotPosition(0)) / SLOT_BYTES, bytes: randomBytes(count * SLOT_BYTES) };
      end += run.bytes.length;
      return run;
    };
    console.log(
      `put of ${count}: ${await alternate({
        store: (round) => store.put(minted[round] as ContentKey[]),
        'write, fdatasync': () => writeThenSync(copy.plain.fd, [nextRun()]),
        O_DSYNC: () => {
          const { slot, bytes } = nextRun();
          return copy.dsync.write(bytes, slotPosition(slot));
        },
      })}`,
    );
  }
  console.log(
    `destroy of ${SCATTERED} scattered: ${await alternate({
      'store (writes at once, fdatasync)': () => store.destroy(pick(live, SCATTERED).map(keyIdOfSlot)),
      'O_DSYNC at once': async () =>
        void (await Promise.all(pick(live, SCATTERED).map((slot) => copy.dsync.write(destroyed, slotPosition(slot))))),
      'O_DSYNC in turn': async () => {
        for (const slot of pick(live, SCATTERED)) await copy.dsync.write(destroyed, slotPosition(slot));
      },
    })}`,
  );
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(process.argv[2] ?? tmpdir(), 'reports-key-bench-'));
  try {
    const store = await openFileKeyStore({ dir, logger: pino({ level: 'warn' }), create: true });
    const live: number[] = [];
    for (let done = 0; done < FILLED_SLOTS; done += 10_000)
      live.push(...(await putKeys(store, 10_000)).map(({ id }) => slotOfKeyId(id) as number));
    // The O_DSYNC ways write to a copy of keys.db: the store's own slots stay its own.
    await copyFile(join(dir, 'keys.db'), join(dir, 'copy.db'));
    const dsync = await openDurable(join(dir, 'copy.db'), 'dsync');
    const plain = await open(join(dir, 'copy.db'), 'r+');
    try {
      await compare(store, { dsync, plain }, live);
    } finally {
      await dsync.handle.close();
      await plain.close();
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
