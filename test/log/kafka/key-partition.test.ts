// The partition of a key must be Kafka's: the one the Java client and kafkajs' DefaultPartitioner
// choose, or records of one report would land where other clients do not look for them.
import kafkajs from 'kafkajs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { murmur2, partitionOfKey } from '../../../src/log/kafka/key-partition.js';

const partitioning = suite('Kafka partition of a key');

function kafkajsPartition(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    partitionErrorCode: 0,
  }));
  return kafkajs.Partitioners.DefaultPartitioner()({ topic: 't', partitionMetadata, message: { key, value: null } });
}

/** Keys of every length up to 40, ids and others, ASCII and not. */
function keys(): string[] {
  const list = [
    '',
    '0',
    '-1',
    '9223372036854775807',
    '-9223372036854775808',
    'é',
    'report €',
    '日本語のキー',
    '\u0000\u007f\u0080',
    '😀 emoji',
  ];
  let seed = 42;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let i = 0; i < 3000; i += 1) {
    const length = Math.floor(random() * 41);
    const alphabet = i % 3 === 0 ? '0123456789' : i % 3 === 1 ? 'abcXYZ-_ 0189' : 'aé€😀日\u007f';
    list.push(Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
  }
  return list;
}

partitioning(
  "matches kafkajs' DefaultPartitioner (the Java client's murmur2) for every key and partition count",
  () => {
    for (const key of keys()) {
      for (const partitions of [1, 2, 3, 7, 12, 50]) {
        if (partitionOfKey(key, partitions) !== kafkajsPartition(key, partitions))
          assert.unreachable(`key ${JSON.stringify(key)}, ${partitions} partitions`);
      }
    }
  },
);

partitioning('hashes known values as the Java client does', () => {
  // From Kafka's own UtilsTest.testMurmur2.
  assert.is(murmur2('21'), -973932308);
  assert.is(murmur2('foobar'), -790332482);
  assert.is(murmur2('a-little-bit-long-string'), -985981536);
  assert.is(murmur2('a-little-bit-longer-string'), -1486304829);
  assert.is(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971);
  assert.is(murmur2('abc'), 479470107);
});

partitioning.run();
