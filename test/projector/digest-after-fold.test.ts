import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SealedReport } from '../../projections/reports.js';
import { keyIdOfSlot } from '../../src/keys/key-slots.js';
import { keyIdText, parseKeyId, type KeyLookup } from '../../src/keys/key-store.js';
import { digestAfterFold } from '../../src/projector/digest-after-fold.js';
import { stateDigest } from '../../src/projector/fold-log.js';

const digests = suite('the state digest, with the key table read while the fold runs');

const digestOfSlot = (slot: number) => Buffer.alloc(32, slot + 1);
const sealedAt = (slot: number): SealedReport => ({ sealed: { key: keyIdText(keyIdOfSlot(slot)), box: 'AAAA' } });

/** A lookup holding the keys of `slots` (their digests only: what the state digest reads). */
function lookupOf(slots: readonly number[]): KeyLookup {
  const held = new Map(slots.map((slot) => [keyIdText(keyIdOfSlot(slot)), digestOfSlot(slot)]));
  const get = (id: Parameters<KeyLookup['get']>[0]) => {
    const contentDigest = held.get(keyIdText(id));
    return contentDigest === undefined ? undefined : { id, secret: Buffer.alloc(32), contentDigest };
  };
  return {
    get,
    copyContentDigest: (keyId, start, end, into) => {
      const digest = get(Buffer.from(keyId.subarray(start, end)))?.contentDigest;
      digest?.copy(into);
      return digest !== undefined;
    },
  };
}

/** A key table source whose every lookup is the next of `tables`, counting the lookups. */
function tablesInTurn(tables: readonly KeyLookup[]) {
  let taken = 0;
  return {
    lookup: () => Promise.resolve(tables[Math.min(taken++, tables.length - 1)] as KeyLookup),
    taken: () => taken,
  };
}

digests('reads the table once, while the fold runs, when it holds every live key', async () => {
  const reports = new Map<string, SealedReport>();
  const source = tablesInTurn([lookupOf([0, 1])]);
  const digest = await digestAfterFold(
    source,
    () => {
      // The table was asked for before the fold did anything.
      assert.is(source.taken(), 1);
      reports.set('1', sealedAt(0)).set('2', sealedAt(1));
      return Promise.resolve();
    },
    reports,
  );
  assert.is(source.taken(), 1);
  assert.is(digest, stateDigest(reports, lookupOf([0, 1])));
  assert.is.not(digest, stateDigest(reports));
});

digests('reads the table again after the fold when the first lacks a live key (a key written meanwhile)', async () => {
  const reports = new Map<string, SealedReport>([
    ['1', sealedAt(0)],
    ['2', sealedAt(1)],
  ]);
  const source = tablesInTurn([lookupOf([0]), lookupOf([0, 1])]);
  const digest = await digestAfterFold(source, () => Promise.resolve(), reports);
  assert.is(source.taken(), 2);
  assert.is(digest, stateDigest(reports, lookupOf([0, 1])));
  assert.is.not(digest, stateDigest(reports, lookupOf([0])));
});

digests('gives a missing key as missing when the table read after the fold lacks it too', async () => {
  const reports = new Map<string, SealedReport>([['1', sealedAt(5)]]);
  const digest = await digestAfterFold(tablesInTurn([lookupOf([])]), () => Promise.resolve(), reports);
  assert.is(digest, stateDigest(reports));
  assert.ok(parseKeyId(reports.get('1')?.sealed.key ?? '') !== undefined);
});

digests('reads the table again after the fold when the early read failed (a key topic slow to catch up)', async () => {
  const reports = new Map<string, SealedReport>([['1', sealedAt(0)]]);
  let taken = 0;
  const source = {
    lookup: () =>
      taken++ === 0 ? Promise.reject(new Error('the key topic did not answer')) : Promise.resolve(lookupOf([0])),
  };
  const digest = await digestAfterFold(source, () => Promise.resolve(), reports);
  assert.is(taken, 2);
  assert.is(digest, stateDigest(reports, lookupOf([0])));
});

digests(
  'reads the table after the fold only when told not to read it early (a replay to a past position)',
  async () => {
    const reports = new Map<string, SealedReport>();
    const source = tablesInTurn([lookupOf([0])]);
    await digestAfterFold(
      source,
      () => {
        assert.is(source.taken(), 0);
        reports.set('1', sealedAt(0));
        return Promise.resolve();
      },
      reports,
      { early: false },
    );
    assert.is(source.taken(), 1);
  },
);

digests("fails as the fold failed, and leaves the table's own failure unhandled nowhere", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const failing = { lookup: () => Promise.reject(new Error('keys.db is cut short')) };
    const error = await digestAfterFold(failing, () => Promise.reject(new Error('the fold failed')), new Map()).catch(
      (caught: unknown) => caught,
    );
    assert.instance(error, Error);
    assert.is((error as Error).message, 'the fold failed');
    const afterFold = await digestAfterFold(failing, () => Promise.resolve(), new Map()).catch(
      (caught: unknown) => caught,
    );
    assert.is((afterFold as Error).message, 'keys.db is cut short');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

digests.run();
