// What a start does with the deletions its snapshot lists as not erased (snapshot-format.ts
// `unerased`) on a key store without a sweep of its own (the key topic): those whose keys are still
// held, and used by no live report, are handed to the service once caught up, as the catch-up's own
// findings are.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyIdText, type KeyId, type KeyStore } from '../../src/keys/key-store.js';
import { idleKeyStore } from '../helpers/idle-key-store.js';
import type { KeysInMemory } from '../../src/keys/key-upkeep.js';
import { StartUpkeep, type ErasingService } from '../../src/keys/start-upkeep.js';
import { createReadModel, type Ended } from '../../src/read-model/read-model.js';
import { memoryLogger } from '../helpers/server.js';

const held = Buffer.from('000000000001', 'hex');
const gone = Buffer.from('000000000002', 'hex');

/** A key topic's store holding `ids` in memory. */
function keyTopicStore(ids: readonly KeyId[]): KeyStore & KeysInMemory {
  const texts = new Set(ids.map(keyIdText));
  return {
    ...idleKeyStore('keys:topic'),
    heldInMemory: (id) => texts.has(keyIdText(id)),
    heldCount: () => texts.size,
    unnamedInMemory: () => Promise.resolve([]),
  };
}

function recordingService(): ErasingService & { readonly handed: Ended[] } {
  const handed: Ended[] = [];
  return {
    handed,
    sweeping: () => undefined,
    eraseLater: (ended) => void handed.push(ended),
    eraseKeysLater: () => undefined,
  };
}

const upkeep = suite("StartUpkeep: the snapshot's deletions not erased");

upkeep('hands over, once caught up, those whose keys are held and used by no live report', async () => {
  const live = Buffer.from('000000000003', 'hex');
  const model = createReadModel();
  model.reports.set('93', { sealed: { key: keyIdText(live), box: Buffer.alloc(20).toString('base64') } });
  const start = new StartUpkeep(model, keyTopicStore([held, live]), {
    logger: memoryLogger().logger,
    writeTimeoutMs: 1000,
    keySweepDelayMs: 60_000,
    current: () => Promise.resolve(),
    unerasedInSnapshot: [
      { reportId: '91', version: 2, key: keyIdText(held) },
      { reportId: '92', version: 4, key: keyIdText(gone) },
      // A live report's key listed by a fault: never destroyed.
      { reportId: '93', version: 2, key: keyIdText(live) },
    ],
  });
  try {
    const service = recordingService();
    // As a server wires them: the service first, then the projector catches up.
    start.wired(service, { erased: () => undefined });
    assert.equal(service.handed, []);
    start.caughtUp();
    assert.equal(service.handed, [{ kind: 'deleted', reportId: '91', version: 2, key: keyIdText(held) }]);
  } finally {
    await start.close();
  }
});

upkeep.run();
