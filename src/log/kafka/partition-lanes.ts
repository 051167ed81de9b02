// Appends go to Kafka in one lane per partition: each lane gathers the appends waiting for its
// partition and has one produce request out at a time (the idempotent producer's sequence numbers
// are per partition and allow no second request before the first is answered). Lanes do not wait
// for each other, so a broker that stops answering holds only the partitions it leads: one produce
// request for every partition at once made all of them wait for the slowest broker, and a paused
// leader stopped every write for as long as it was paused. (Lanes of partitions with one leader
// that flush together still share a request: produce-coalescer.ts.) The key store's writes go in
// lanes of their own the same way (src/keys/kafka-key-store.ts), with key records for messages.
import { Deadlines } from '../../deadlines.js';
import { Batcher } from '../batcher.js';
import type { AppendOptions, LogMessage, LogPosition } from '../event-log.js';

/** Sends the appends of one partition (in arrival order) and returns one list of results (positions) per append. */
export type LaneFlush<M = LogMessage, R = LogPosition> = (
  partition: number,
  appends: (readonly M[])[],
) => Promise<R[][]>;

export interface PartitionLanesOptions<M, R> {
  readonly partitions: number;
  readonly partitionOf: (message: M) => number;
  readonly flush: LaneFlush<M, R>;
  /** Appends allowed to wait in one lane (REPORTS_MAX_PENDING_APPENDS): a stuck partition cannot take the others' room. */
  readonly maxPendingPerLane?: number;
  /** Where the appends' timeouts are kept (one timer for all lanes); lanes' own unless given (an owner that clears them at close). */
  readonly deadlines?: Deadlines;
}

export class PartitionLanes<M = LogMessage, R = LogPosition> {
  private readonly lanes: Batcher<readonly M[], R[]>[];
  private readonly partitionOf: (message: M) => number;

  constructor({
    partitions,
    partitionOf,
    flush,
    maxPendingPerLane,
    deadlines = new Deadlines(),
  }: PartitionLanesOptions<M, R>) {
    this.partitionOf = partitionOf;
    this.lanes = Array.from(
      { length: partitions },
      (_, partition) =>
        new Batcher((appends: (readonly M[])[]) => flush(partition, appends), {
          deadlines,
          ...(maxPendingPerLane === undefined ? {} : { maxPending: maxPendingPerLane }),
        }),
    );
  }

  /**
   * Queues `messages` in the lanes of their partitions and resolves with their positions, in the
   * order given. Messages of one partition travel in one produce request; an append that spans
   * partitions (only tools copy such batches) is as durable as its slowest lane.
   */
  add(messages: readonly M[], { signal, timeoutMs }: AppendOptions = {}): Promise<R[]> {
    const first = this.partitionOf(messages[0] as M);
    if (messages.every((message) => this.partitionOf(message) === first))
      return this.lane(first).add(messages, signal, timeoutMs);
    const byPartition = new Map<number, { messages: M[]; indexes: number[] }>();
    messages.forEach((message, index) => {
      const partition = this.partitionOf(message);
      const group = byPartition.get(partition) ?? { messages: [], indexes: [] };
      group.messages.push(message);
      group.indexes.push(index);
      byPartition.set(partition, group);
    });
    const positions: R[] = new Array<R>(messages.length);
    const sent = [...byPartition].map(async ([partition, group]) => {
      const written = await this.lane(partition).add(group.messages, signal, timeoutMs);
      written.forEach((position, i) => (positions[group.indexes[i] as number] = position));
    });
    return Promise.all(sent).then(() => positions);
  }

  /** Resolves once every lane has flushed what it holds (or failed). */
  async idle(): Promise<void> {
    await Promise.all(this.lanes.map((lane) => lane.idle()));
  }

  private lane(partition: number): Batcher<readonly M[], R[]> {
    const lane = this.lanes[partition];
    if (lane === undefined)
      throw new RangeError(`partition ${partition} is not one of the topic's ${this.lanes.length}`);
    return lane;
  }
}
