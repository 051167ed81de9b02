// Key ids of the key topic carry the partition their records live in: a destroy finds it from the id
// alone; ids minted before they did stay where Kafka's partitioner put them.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_KEY_PARTITIONS, mintKeyId, PARTITIONED_ID_BYTES, partitionOfKeyId } from '../../src/keys/kafka-key-ids.js';
import { decodeKeyRecord } from '../../src/keys/key-record.js';
import { keyIdText, parseKeyId } from '../../src/keys/key-store.js';
import { partitionOfKey } from '../../src/log/kafka/key-partition.js';

const ids = suite('mintKeyId, partitionOfKeyId');

ids(
  'an id minted for a partition names it, in every partition of topics of 1 to 300 partitions and of the most an id can name',
  () => {
    for (const partitions of [1, 2, 3, 7, 64, 300, MAX_KEY_PARTITIONS]) {
      for (const partition of new Set([0, 1 % partitions, Math.floor(partitions / 2), partitions - 1])) {
        const text = keyIdText(mintKeyId(partition, randomBytes));
        assert.is(partitionOfKeyId(text, partitions), partition, `partition ${partition} of ${partitions}`);
      }
    }
  },
);

ids('is 15 bytes, 13 of them random, and reads back from its text as a key record of the topic', () => {
  const id = mintKeyId(2, () => Buffer.alloc(13, 0xab));
  assert.is(id.length, PARTITIONED_ID_BYTES);
  assert.equal([...id], [0, 2, ...Array<number>(13).fill(0xab)]);
  const text = keyIdText(id);
  assert.is(text.length, 20);
  assert.ok(parseKeyId(text).equals(id));
  assert.equal(decodeKeyRecord(text, Buffer.alloc(0)), { kind: 'destroyed', idText: text });
  assert.is.not(keyIdText(mintKeyId(2, randomBytes)), keyIdText(mintKeyId(2, randomBytes)));
});

ids(
  "an id of 16 random bytes (minted before ids named their partition), or of any other length, goes where Kafka's partitioner puts it",
  () => {
    for (const bytes of [16, 14, 6, 1]) {
      const text = keyIdText(randomBytes(bytes));
      assert.is(partitionOfKeyId(text, 5), partitionOfKey(text, 5));
    }
  },
);

ids(
  'an id naming a partition the topic does not have goes to one it has; a partition an id cannot name is refused',
  () => {
    assert.is(partitionOfKeyId(keyIdText(mintKeyId(7, randomBytes)), 3), 1);
    assert.throws(() => mintKeyId(MAX_KEY_PARTITIONS, randomBytes), RangeError);
    assert.throws(() => mintKeyId(-1, randomBytes), RangeError);
  },
);

ids.run();
