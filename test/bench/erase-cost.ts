// What the service's eraser costs a delete by itself (key-eraser.ts), on this machine: the fold's
// request to erase what it folded, then the request's own erasure of the same deletion, as a delete
// that took effect makes them, against a key store that confirms at once. Nothing of the store's
// write is in it: only the bookkeeping that keeps an erasure from being written twice, tried again
// when unconfirmed, and listed in snapshots (docs/performance.md).
//
//   npm run bench:erase        (BENCH_ERASURES: how many, 200,000 unless set)
import { pino } from 'pino';
import type { Deletion } from '../../src/keys/deletion-records.js';
import type { KeyId, KeyStore } from '../../src/keys/key-store.js';
import { idleKeyStore } from '../helpers/idle-key-store.js';
import { createKeyEraser } from '../../src/reports/key-eraser.js';

const count = Number(process.env['BENCH_ERASURES'] ?? 200_000);
/** Erasures in flight at once, as 64 connections make them. */
const IN_FLIGHT = 64;

const store: KeyStore & { recordDeletions(deletions: readonly Deletion[]): Promise<void> } = {
  ...idleKeyStore('keys:confirming at once'),
  recordDeletions: () => Promise.resolve(),
};
let told = 0;
const eraser = createKeyEraser(store, pino({ level: 'silent' }), 1000, (ids: readonly KeyId[]) => {
  told += ids.length;
});

/** Report n's delete: a 12-byte key id as the stores mint them, and a canonical int64 id. */
async function deleteOne(n: number): Promise<void> {
  const key = Buffer.alloc(12);
  key.writeUInt32BE(n, 8);
  const reportId = String(1_000_000 + n);
  // The fold's copy of the deletion comes first (the request waits for its event to be folded).
  eraser.eraseLater({ reportId, version: 2, key: Buffer.from(key) });
  await eraser.erase({ reportId, version: 2, key }, 1000);
}

async function erase(from: number, times: number): Promise<void> {
  const inFlight: Promise<void>[] = [];
  for (let n = from; n < from + times; n += 1) {
    inFlight.push(deleteOne(n));
    if (inFlight.length === IN_FLIGHT) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
}

await erase(0, 20_000);
for (let run = 1; run <= 3; run += 1) {
  const cpu = process.cpuUsage();
  await erase(run * count, count);
  const { user, system } = process.cpuUsage(cpu);
  console.log(`run ${run}: ${count} deletes erased, ${((user + system) / count).toFixed(2)} µs of CPU a delete`);
}
eraser.stop();
if (told !== 20_000 + 3 * count)
  throw new Error(`the eraser told of ${told} destroyed keys, not ${20_000 + 3 * count}`);
