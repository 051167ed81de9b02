// The key topic's partitions against the event topic's: the same count and the same replicas in
// the same order (so the same preferred leader) say nothing; anything else is one warning naming
// both topics and what to do.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PartitionMetadata } from 'kafkajs';
import { assignmentMismatch } from '../../../src/log/kafka/key-topic.js';

const partitions = (...replicas: number[][]): PartitionMetadata[] =>
  replicas.map((ids, partitionId) => ({
    partitionId,
    replicas: ids,
    leader: ids[0] ?? -1,
    isr: ids,
    offlineReplicas: [],
    partitionErrorCode: 0,
  }));

const mismatch = suite('assignmentMismatch');

mismatch('partitions with the same replicas in the same order say nothing', () => {
  assert.is(
    assignmentMismatch('r.keys', partitions([1, 2, 3], [2, 3, 1]), 'r', partitions([1, 2, 3], [2, 3, 1])),
    undefined,
  );
});

mismatch(
  'another preferred leader (the same replicas in another order) is named, with the first partition that differs',
  () => {
    const warning =
      assignmentMismatch(
        'r.keys',
        partitions([1, 2, 3], [3, 1, 2], [1, 3, 2]),
        'r',
        partitions([1, 2, 3], [2, 3, 1], [3, 1, 2]),
      ) ?? '';
    assert.match(
      warning,
      /^key topic r\.keys has other replicas than topic r in 2 of its 3 partitions \(partition 1: 3,1,2 against 2,3,1\)/,
    );
    assert.match(warning, /kafka-reassign-partitions/);
  },
);

mismatch('another partition count is named with both counts', () => {
  const warning = assignmentMismatch('r.keys', partitions([1]), 'r', partitions([1], [1], [1])) ?? '';
  assert.match(
    warning,
    /^key topic r\.keys has 1 partition and topic r 3 partitions: a report's key is not in its report's partition/,
  );
  assert.match(warning, /reports migrate --to-topic/);
});

mismatch.run();
