// Produce requests go one per leader: the partitions with the same leader share a request, at
// most one out per leader, and what arrives meanwhile goes in the next. The lanes
// (partition-lanes.ts) keep one request per partition in flight, so a paused leader holds only its
// partitions; but one request per partition tripled the requests on a three-partition topic (Kafka
// creates at 0.37x the file log's rate, from 0.65x with one request for all). A leader that stops
// answering holds only its own partitions' request, as before. Grouping follows the service's view
// of the leaders (at most a second old); where it is stale (during an election) a request may span
// two brokers, and waits for both. Generic in what a message is and what its answer is: the event
// log's appends and positions, the key store's key records and offsets.
import type { RecordMetadata } from 'kafkajs';
import { AppendOutcomeUnknownError, type LogMessage, type LogPosition, type LogRecord } from '../event-log.js';

/**
 * Sends the messages of each partition in one produce request; per partition, the positions of its
 * messages or why they have none (the request as a whole may also fail).
 */
export type CoalescedSend<M = LogMessage, P = LogPosition> = (
  byPartition: ReadonlyMap<number, readonly M[]>,
) => Promise<Map<number, P[] | Error>>;

interface Waiting<M, P> {
  readonly messages: readonly M[];
  readonly resolve: (positions: P[]) => void;
  readonly reject: (error: unknown) => void;
}

/** One leader's requests: at most one out; what arrives meanwhile goes in the next. */
interface Group<M, P> {
  waiting: Map<number, Waiting<M, P>>;
  busy: boolean;
}

export class ProduceCoalescer<M = LogMessage, P = LogPosition> {
  private readonly groups = new Map<number, Group<M, P>>();

  constructor(
    private readonly send: CoalescedSend<M, P>,
    /** The group of a partition: its leader's node id, or anything unique to it when unknown. */
    private readonly groupOf: (partition: number) => number,
  ) {}

  /** One partition's messages (at most one call per partition is out at a time: the lanes see to it). */
  produce(partition: number, messages: readonly M[]): Promise<P[]> {
    return new Promise((resolve, reject) => {
      const key = this.groupOf(partition);
      let group = this.groups.get(key);
      if (group === undefined) {
        group = { waiting: new Map(), busy: false };
        this.groups.set(key, group);
      }
      if (group.waiting.has(partition)) {
        reject(new Error(`partition ${partition} already has messages waiting for this request`));
        return;
      }
      group.waiting.set(partition, { messages, resolve, reject });
      if (!group.busy) this.schedule(key, group);
    });
  }

  /** Sends the group's waiting partitions after this turn's continuations (lanes answered together join). */
  private schedule(key: number, group: Group<M, P>): void {
    group.busy = true;
    setImmediate(() => {
      const partitions = group.waiting;
      group.waiting = new Map();
      const byPartition = new Map([...partitions].map(([partition, { messages }]) => [partition, messages]));
      this.send(byPartition)
        .then(
          (positions) => {
            for (const [partition, { resolve, reject }] of partitions) {
              const written = positions.get(partition);
              if (written === undefined)
                reject(new Error(`the produce answer holds nothing for partition ${partition}`));
              else if (written instanceof Error) reject(written);
              else resolve(written);
            }
          },
          (error: unknown) => {
            for (const { reject } of partitions.values()) reject(error);
          },
        )
        .finally(() => {
          if (group.waiting.size > 0) this.schedule(key, group);
          else {
            group.busy = false;
            this.groups.delete(key);
          }
        });
    });
  }
}

/**
 * Per partition, the positions of its messages from a produce answer: its records are one batch
 * with consecutive offsets from the base offset, in the order sent. Without an offset (none, or -1
 * as a broker answers a duplicate it no longer remembers) it is not known whether they were
 * written: the writers answer 503 (retrying is safe), and the log is not blamed.
 */
export function positionsOf(
  byPartition: ReadonlyMap<number, readonly LogMessage[]>,
  answer: readonly RecordMetadata[],
): Map<number, LogPosition[] | Error> {
  const results = new Map<number, LogPosition[] | Error>();
  for (const [partition, messages] of byPartition) {
    const entry = answer.find((candidate) => candidate.partition === partition);
    const base = Number(entry?.baseOffset ?? entry?.offset);
    results.set(
      partition,
      Number.isSafeInteger(base) && base >= 0
        ? messages.map((_, i): LogPosition => ({ partition, offset: base + i }))
        : new AppendOutcomeUnknownError(`Kafka answered without an offset for partition ${partition}`),
    );
  }
  return results;
}

/** What a produce answer gives: the positions per partition, and the records written, for the commit listeners. */
export function answered(
  byPartition: ReadonlyMap<number, readonly LogMessage[]>,
  answer: readonly RecordMetadata[],
  timestampMs: number,
): { results: Map<number, LogPosition[] | Error>; records: LogRecord[] } {
  const results = positionsOf(byPartition, answer);
  const records: LogRecord[] = [];
  for (const [partition, messages] of byPartition) {
    const positions = results.get(partition);
    if (Array.isArray(positions))
      messages.forEach(({ key, value }, i) =>
        records.push({ key, value, timestampMs, position: positions[i] as LogPosition }),
      );
  }
  return { results, records };
}
