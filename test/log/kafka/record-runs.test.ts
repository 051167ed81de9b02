// How the Kafka follower hands fetched batches on: records together, gaps in their place.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogGap, LogRecord } from '../../../src/log/event-log.js';
import { recordRuns, type FollowItem } from '../../../src/log/kafka/follow.js';
import { collect } from '../../helpers/async.js';

const record = (offset: number): LogRecord => ({
  key: String(offset),
  value: Buffer.from('v'),
  timestampMs: 0,
  position: { partition: 0, offset },
});
const gap = (next: number): LogGap => ({ partition: 0, next });

// eslint-disable-next-line @typescript-eslint/require-await -- an async iterable of fixed batches
async function* fetched(...batches: FollowItem[][]): AsyncIterable<readonly FollowItem[]> {
  yield* batches;
}

const runs = suite('recordRuns');

runs('passes the records of a fetched batch on together, and each gap in order between them', async () => {
  const seen: string[] = [];
  const onGap = (item: LogGap) => void seen.push(`gap ${item.next}`);
  for await (const batch of recordRuns(
    fetched([record(0), record(1), gap(4), record(4)], [gap(9)], [record(9)]),
    onGap,
  )) {
    seen.push(batch.map(({ position }) => position.offset).join(','));
  }
  assert.equal(seen, ['0,1', 'gap 4', '4', 'gap 9', '9']);
});

runs('yields no empty batch for a fetch of gaps only, and works without an onGap', async () => {
  assert.equal(await collect(recordRuns(fetched([gap(3)], [gap(5)]))), []);
});

runs.run();
