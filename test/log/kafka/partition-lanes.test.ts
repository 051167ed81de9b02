import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AppendTimeoutError,
  LogOverloadedError,
  type LogMessage,
  type LogPosition,
} from '../../../src/log/event-log.js';
import { PartitionLanes, type LaneFlush } from '../../../src/log/kafka/partition-lanes.js';
import { rejection } from '../../helpers/async.js';

const message = (key: string): LogMessage => ({ key, value: Buffer.from(key) });
/** Keys name their partition: "2:x" goes to partition 2. */
const partitionOf = ({ key }: LogMessage) => Number(key.split(':')[0]);

/** A flush that numbers each partition's records from 0 and remembers the requests, per partition. */
function countingFlush(requests: Array<{ partition: number; keys: string[] }>): LaneFlush {
  const next = new Map<number, number>();
  return (partition, appends) => {
    requests.push({ partition, keys: appends.flat().map(({ key }) => key) });
    return Promise.resolve(
      appends.map((messages) =>
        messages.map((): LogPosition => {
          const offset = next.get(partition) ?? 0;
          next.set(partition, offset + 1);
          return { partition, offset };
        }),
      ),
    );
  };
}

const lanes = suite('PartitionLanes');

lanes('a partition whose produce request never returns holds only its own appends', async () => {
  const requests: Array<{ partition: number; keys: string[] }> = [];
  const counting = countingFlush(requests);
  const flush: LaneFlush = (partition, appends) =>
    partition === 0 ? new Promise<LogPosition[][]>(() => undefined) : counting(partition, appends);
  const lanes = new PartitionLanes({ partitions: 3, partitionOf, flush });
  const stuck = lanes.add([message('0:a')], { timeoutMs: 50 });
  assert.equal(await lanes.add([message('1:b')]), [{ partition: 1, offset: 0 }]);
  assert.equal(await lanes.add([message('2:c')]), [{ partition: 2, offset: 0 }]);
  assert.instance(await rejection(stuck), AppendTimeoutError);
});

lanes('appends that wait for the same lane go in one request, in arrival order', async () => {
  const requests: Array<{ partition: number; keys: string[] }> = [];
  const lanes = new PartitionLanes({ partitions: 2, partitionOf, flush: countingFlush(requests) });
  const answers = await Promise.all(['1:a', '1:b', '1:c'].map((key) => lanes.add([message(key)])));
  assert.equal(answers, [[{ partition: 1, offset: 0 }], [{ partition: 1, offset: 1 }], [{ partition: 1, offset: 2 }]]);
  assert.equal(requests, [
    { partition: 1, keys: ['1:a'] },
    { partition: 1, keys: ['1:b', '1:c'] },
  ]);
});

lanes('an append over several partitions gets its positions back in the order of its messages', async () => {
  const lanes = new PartitionLanes({ partitions: 3, partitionOf, flush: countingFlush([]) });
  const positions = await lanes.add(['2:a', '0:b', '2:c', '1:d'].map(message));
  assert.equal(positions, [
    { partition: 2, offset: 0 },
    { partition: 0, offset: 0 },
    { partition: 2, offset: 1 },
    { partition: 1, offset: 0 },
  ]);
});

lanes("caps the appends waiting in each lane, so a stuck partition does not take the others' room", async () => {
  const counting = countingFlush([]);
  const flush: LaneFlush = (partition, appends) =>
    partition === 0 ? new Promise<LogPosition[][]>(() => undefined) : counting(partition, appends);
  const lanes = new PartitionLanes({ partitions: 2, partitionOf, flush, maxPendingPerLane: 2 });
  // The first is taken into the stuck flush; two more wait; the fourth is refused.
  const waiting = ['0:a', '0:b', '0:c'].map((key) => lanes.add([message(key)], { timeoutMs: 100 }));
  assert.instance(await rejection(lanes.add([message('0:d')])), LogOverloadedError);
  assert.equal(await lanes.add([message('1:e')]), [{ partition: 1, offset: 0 }]);
  for (const pending of waiting) assert.instance(await rejection(pending), AppendTimeoutError);
});

lanes.run();
