// What the fold tells a running server to erase (read-model.ts Ended): the key of a deleted report
// and of a void sealed create, but never the key of the live report. A producer's retry can write a
// create twice; the second copy is void, and its key is the key of the report the first one made.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import { mintKeyId } from '../../src/keys/kafka-key-ids.js';
import { keyIdText } from '../../src/keys/key-store.js';
import { applyRecord, createReadModel, type Ended } from '../../src/read-model/read-model.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { sealedCreate } from '../helpers/sealed-history.js';

const mint = (contentDigest: Buffer) => ({
  id: mintKeyId(0, randomBytes),
  secret: randomBytes(32),
  contentDigest: Buffer.from(contentDigest),
});

/** Folds `events` in order and answers what the fold said to erase, and the void count. */
function fold(events: readonly ReportEvent[]): { ended: Ended[]; voidEvents: number } {
  const model = createReadModel();
  const ended: Ended[] = [];
  events.forEach((event, offset) =>
    applyRecord(
      model,
      { key: event.subject, value: encodeEvent(event), timestampMs: 0, position: { partition: 0, offset } },
      undefined,
      (what) => ended.push(what),
    ),
  );
  return { ended, voidEvents: model.counts.voidEvents };
}

test('a second copy of the create that made the live report is void and its key is kept', () => {
  const { event } = sealedCreate(basedOn(created('1', 'once'), 0), { mint });
  assert.equal(fold([event, event]), { ended: [], voidEvents: 1 });
});

test('a void create sealed under another key has that key erased, and the live one is kept', () => {
  const first = sealedCreate(basedOn(created('1', 'first'), 0), { mint });
  const late = sealedCreate(basedOn(created('1', 'late'), 0), { mint });
  assert.equal(fold([first.event, late.event]), {
    ended: [{ kind: 'void', key: keyIdText(late.key.id) }],
    voidEvents: 1,
  });
});

test('a copy that lands after the report was deleted has its key, already the deleted one, erased again', () => {
  const { event, key } = sealedCreate(basedOn(created('1', 'once'), 0), { mint });
  const text = keyIdText(key.id);
  assert.equal(fold([event, basedOn(deleted('1'), 1), event]), {
    ended: [
      { kind: 'deleted', reportId: '1', version: 2, key: text },
      { kind: 'void', key: text },
    ],
    voidEvents: 1,
  });
});

test.run();
