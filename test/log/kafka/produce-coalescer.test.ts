// Produce calls of partitions with one leader made in the same turn go as one request; another
// leader's partitions go in a request of their own, and a request that never answers holds only
// its own partitions.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogMessage, LogPosition } from '../../../src/log/event-log.js';
import { ProduceCoalescer } from '../../../src/log/kafka/produce-coalescer.js';

const message = (key: string): LogMessage => ({ key, value: Buffer.from(key) });

/** A send that records each request and answers offsets from 0 per partition, or never for `stuck` partitions. */
function recordingSend(stuck: ReadonlySet<number> = new Set()) {
  const requests: number[][] = [];
  const send = (
    byPartition: ReadonlyMap<number, readonly LogMessage[]>,
  ): Promise<Map<number, LogPosition[] | Error>> => {
    requests.push([...byPartition.keys()].sort());
    if ([...byPartition.keys()].some((partition) => stuck.has(partition))) return new Promise(() => undefined);
    return Promise.resolve(
      new Map(
        [...byPartition].map(([partition, messages]) => [
          partition,
          messages.map((_, offset) => ({ partition, offset })),
        ]),
      ),
    );
  };
  return { requests, send };
}

const coalescer = suite('ProduceCoalescer');

coalescer('sends the partitions of one leader that produce in the same turn as one request', async () => {
  const { requests, send } = recordingSend();
  const produce = new ProduceCoalescer(send, () => 1);
  const answers = await Promise.all([
    produce.produce(0, [message('a'), message('b')]),
    produce.produce(1, [message('c')]),
    produce.produce(2, [message('d')]),
  ]);
  assert.equal(requests, [[0, 1, 2]]);
  assert.equal(answers, [
    [
      { partition: 0, offset: 0 },
      { partition: 0, offset: 1 },
    ],
    [{ partition: 1, offset: 0 }],
    [{ partition: 2, offset: 0 }],
  ]);
});

coalescer('sends each leader its own request, and a leader that never answers holds only its partitions', async () => {
  const { requests, send } = recordingSend(new Set([0]));
  const produce = new ProduceCoalescer(send, (partition) => (partition === 0 ? 1 : 2));
  let stuckAnswered = false;
  void produce.produce(0, [message('a')]).then(() => (stuckAnswered = true));
  const healthy = await Promise.all([produce.produce(1, [message('b')]), produce.produce(2, [message('c')])]);
  assert.equal(requests, [[0], [1, 2]]);
  assert.equal(healthy, [[{ partition: 1, offset: 0 }], [{ partition: 2, offset: 0 }]]);
  assert.is(stuckAnswered, false);
});

coalescer('calls in later turns go in later requests', async () => {
  const { requests, send } = recordingSend();
  const produce = new ProduceCoalescer(send, () => 1);
  await produce.produce(0, [message('a')]);
  await produce.produce(1, [message('b')]);
  assert.equal(requests, [[0], [1]]);
});

coalescer('what arrives while a leader has a request out waits and goes in its next request', async () => {
  let release: () => void = () => undefined;
  const requests: number[][] = [];
  const produce = new ProduceCoalescer<LogMessage, LogPosition>(
    (byPartition) => {
      requests.push([...byPartition.keys()].sort());
      const answer = new Map(
        [...byPartition].map(([partition, messages]): [number, LogPosition[]] => [
          partition,
          messages.map((_, offset) => ({ partition, offset })),
        ]),
      );
      return requests.length === 1
        ? new Promise((resolve) => (release = () => resolve(answer)))
        : Promise.resolve(answer);
    },
    () => 1,
  );
  const first = produce.produce(0, [message('a')]);
  await new Promise((resolve) => setImmediate(resolve));
  const later = [produce.produce(1, [message('b')]), produce.produce(2, [message('c')])];
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(requests, [[0]]);
  release();
  await Promise.all([first, ...later]);
  assert.equal(requests, [[0], [1, 2]]);
});

coalescer(
  'a partition without an offset in the answer fails alone; a failed request fails all of its partitions',
  async () => {
    const produce = new ProduceCoalescer(
      (byPartition) =>
        Promise.resolve(
          new Map(
            [...byPartition.keys()].map((partition): [number, LogPosition[] | Error] => [
              partition,
              partition === 1 ? new Error('no offset') : [{ partition, offset: 7 }],
            ]),
          ),
        ),
      () => 1,
    );
    const [ok, failed] = await Promise.allSettled([
      produce.produce(0, [message('a')]),
      produce.produce(1, [message('b')]),
    ]);
    assert.equal(ok, { status: 'fulfilled', value: [{ partition: 0, offset: 7 }] });
    assert.is(failed?.status, 'rejected');
    const broken = new ProduceCoalescer(
      () => Promise.reject(new Error('broker gone')),
      () => 1,
    );
    const both = await Promise.allSettled([broken.produce(0, [message('a')]), broken.produce(1, [message('b')])]);
    assert.equal(
      both.map((result) => result.status),
      ['rejected', 'rejected'],
    );
  },
);

coalescer.run();
