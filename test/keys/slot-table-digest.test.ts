// The state digest asks the key table for every live report's content digest alone
// (SlotTable.copyContentDigest, the key id given as a range of a larger buffer): the same answer
// as the key's, and none for any other slot.
import { createHash } from 'node:crypto';
import { rm, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { HEADER_BYTES, keyIdOfSlot, SLOT_BYTES } from '../../src/keys/key-slots.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();
const test = suite('SlotTable.copyContentDigest');

test("answers a live key's digest as get does, and nothing for a destroyed, damaged or unknown slot", async () => {
  const dir = await tempDir('reports-slot-digest-');
  try {
    const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    const minted = [0, 1, 2].map((i) => keys.mint(digestOf(`report ${i}`)));
    await keys.put(minted);
    const [live, destroyed, damaged] = minted as [(typeof minted)[0], (typeof minted)[0], (typeof minted)[0]];
    await keys.destroy([destroyed.id]);
    await keys.close();
    // A byte of the third slot changed: its check fails.
    const file = join(dir, 'keys.db');
    const bytes = await readFile(file);
    const at = HEADER_BYTES + 2 * SLOT_BYTES + 40;
    bytes[at] = (bytes[at] as number) ^ 0xff;
    await writeFile(file, bytes);
    const reopened = await openFileKeyStore({ dir, logger: memoryLogger().logger });
    const table = await reopened.lookup();
    // The id in the middle of a larger buffer, as a record of the report table holds it.
    const digestOfId = (id: Buffer): Buffer | undefined => {
      const around = Buffer.concat([Buffer.from([0xaa, 0xbb, 0xcc]), id, Buffer.from([0xdd])]);
      const into = Buffer.alloc(32, 0xee);
      const found = table.copyContentDigest(around, 3, 3 + id.length, into);
      if (!found) assert.ok(into.equals(Buffer.alloc(32, 0xee)), 'nothing copied for a key that is not there');
      return found ? into : undefined;
    };
    assert.ok(digestOfId(live.id)?.equals(live.contentDigest));
    assert.ok(digestOfId(live.id)?.equals(table.get(live.id)?.contentDigest as Buffer));
    assert.is(digestOfId(destroyed.id), undefined);
    assert.is(digestOfId(damaged.id), undefined);
    assert.is(table.get(damaged.id), undefined);
    assert.is(digestOfId(keyIdOfSlot(3)), undefined, 'a slot past the table');
    assert.is(digestOfId(Buffer.from('a')), undefined, 'an id of another length');
    await reopened.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
