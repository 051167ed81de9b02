// The key store's writes go to the key topic as the event log's appends go to the event topic: in
// one lane per partition (log/kafka/partition-lanes.ts), each with one produce request out at a
// time and a cap of its own on the writes waiting, and lanes whose partitions have the same leader
// sharing a request (produce-coalescer.ts). A key lives in its report's partition, led by the same
// broker as the report's events (kafka-key-ids.ts, key-topic.ts), so a broker that stops answering
// holds the key writes of the reports it holds anyway and no others: with one queue for the whole
// topic, a paused leader of any partition held every create and delete.
import type { ProducerRecord, RecordMetadata } from 'kafkajs';
import type { Deadlines } from '../deadlines.js';
import { LogUnavailableError } from '../log/event-log.js';
import { isConnectivityFailure, KafkaRefusedError } from '../log/kafka/errors.js';
import { PartitionLanes } from '../log/kafka/partition-lanes.js';
import { ProduceCoalescer } from '../log/kafka/produce-coalescer.js';
import { offsetsOf, requestsOf, type KeyMessage } from './key-writes.js';

export interface KeyLanesOptions {
  /** The idempotent producer's send. */
  readonly send: (record: ProducerRecord) => Promise<RecordMetadata[]>;
  readonly topic: string;
  readonly partitions: number;
  /** How long the broker may hold a produce request for the replicas' acknowledgements. */
  readonly produceTimeoutMs: number;
  /** The topic's max.message.bytes: it bounds each partition's batch. */
  readonly maxMessageBytes: number;
  /** Writes allowed to wait in one lane (REPORTS_MAX_PENDING_APPENDS); one more is refused with LogOverloadedError. */
  readonly maxPendingPerLane?: number | undefined;
  /** The node id of a partition's leader as last seen (requests are shared per leader), or undefined. */
  readonly leaderOf: (partition: number) => number | undefined;
  /** The writes' timeouts (the store clears them at close). */
  readonly deadlines: Deadlines;
}

export class KeyLanes {
  private readonly lanes: PartitionLanes<KeyMessage, number>;
  private readonly coalescer: ProduceCoalescer<KeyMessage, number>;

  constructor(private readonly options: KeyLanesOptions) {
    const { partitions, maxPendingPerLane, deadlines, leaderOf } = options;
    // Unknown leader: a request of its own.
    this.coalescer = new ProduceCoalescer(
      (byPartition) => this.send(byPartition),
      (partition) => leaderOf(partition) ?? -1 - partition,
    );
    this.lanes = new PartitionLanes<KeyMessage, number>({
      partitions,
      partitionOf: ({ partition }) => partition,
      flush: (partition, writes) => this.flush(partition, writes),
      deadlines,
      ...(maxPendingPerLane === undefined ? {} : { maxPendingPerLane }),
    });
  }

  /**
   * Writes `messages` and resolves with their offsets in order once every one is acknowledged
   * with an offset; rejects with AppendTimeoutError after `timeoutMs` (a write
   * not sent by then never is). Messages of several partitions are as durable as the slowest lane.
   */
  write(messages: readonly KeyMessage[], timeoutMs?: number): Promise<number[]> {
    if (messages.length === 0) return Promise.resolve([]);
    return this.lanes.add(messages, timeoutMs === undefined ? {} : { timeoutMs });
  }

  /** Resolves once every lane has flushed what it holds (or failed). */
  idle(): Promise<void> {
    return this.lanes.idle();
  }

  /** One lane's group commit: its writes' messages in as few produce requests as the topic takes. */
  private async flush(partition: number, writes: (readonly KeyMessage[])[]): Promise<number[][]> {
    const offsets: number[] = [];
    for (const request of requestsOf(writes.flat(), this.options.maxMessageBytes))
      offsets.push(...(await this.coalescer.produce(partition, request)));
    let next = 0;
    return writes.map((messages) => offsets.slice(next, (next += messages.length)));
  }

  /** One produce request of the partitions' messages, stamped now (the segment rolls go by these times). */
  private async send(byPartition: ReadonlyMap<number, readonly KeyMessage[]>): Promise<Map<number, number[] | Error>> {
    const timestamp = String(Date.now());
    const messages = [...byPartition.values()].flatMap((list) =>
      list.map(({ key, value, partition }) => ({ key, value, partition, timestamp })),
    );
    const { send, topic, produceTimeoutMs } = this.options;
    const answer = await send({ topic, acks: -1, timeout: produceTimeoutMs, messages }).catch((error: unknown) => {
      throw failure(topic, error);
    });
    // A partition without an offset: its writes fail as unavailable (503), the others are acknowledged.
    return new Map(
      [...offsetsOf(byPartition, answer)].map(([partition, offsets]) => [
        partition,
        offsets instanceof Error ? failure(topic, offsets) : offsets,
      ]),
    );
  }
}

/** A failed produce request: the topic unavailable for a connectivity failure (kafkajs' retriable), else refused. */
function failure(topic: string, error: unknown): Error {
  if (!isConnectivityFailure(error)) return new KafkaRefusedError(error);
  const reason = error instanceof Error ? error.message : String(error);
  return new LogUnavailableError(`the key topic ${topic} is unavailable: ${reason}`, { cause: error });
}
