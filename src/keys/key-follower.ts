// Follows the whole key topic into memory, as the event log is followed (log/kafka/follow.ts):
// without a consumer group, one fetch loop per partition asking that partition's leader, here with
// the brokers' first fetches gated (fetch-gate.ts), so that closing leaves no socket. A caller that
// must see what other instances wrote catches up first: it reads the partitions' heads (from
// their leaders alone, partition-heads.ts) and waits until the follower has read up to them.
import type { Kafka } from 'kafkajs';
import { cursorReached, LogUnavailableError, type Cursor, type LogRecord } from '../log/event-log.js';
import type { BrokerReachability } from '../log/kafka/brokers.js';
import { fetchGated } from '../log/kafka/fetch-gate.js';
import { isGap } from '../log/kafka/follow.js';
import { leadersViewOf } from '../log/kafka/leaders-view.js';
import { groupFreeCluster } from '../log/kafka/group-free-cluster.js';
import { ItemChannel } from '../log/kafka/item-channel.js';
import { followPartition, type FollowItem } from '../log/kafka/partition-fetch.js';
import type { PartitionHeads } from '../log/kafka/partition-heads.js';
import { settleWithin } from '../log/settle-within.js';
import { DISCONNECT_MS } from '../log/kafka/disconnect.js';

export interface KeyFollowerOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly partitions: number;
  readonly brokers?: BrokerReachability;
  /** The partitions' heads, for catching up; closed with the follower. */
  readonly heads: PartitionHeads;
  /** Applies one record; called in offset order per partition. A throw stops the following (failed). */
  readonly apply: (record: LogRecord) => void;
  /** After each fetched batch was applied. */
  readonly applied: () => void;
  /** The following stopped for good (not by close): the error, once. */
  readonly failed: (error: Error) => void;
}

interface Waiter {
  readonly target: Cursor;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class KeyFollower {
  /** The next offset to read per partition (the follow loops re-read it before every fetch). */
  private readonly next = new Map<number, number>();
  private readonly waiters = new Set<Waiter>();
  private readonly stop = new AbortController();
  private failure: Error | undefined;
  private readonly loop: Promise<void>;

  constructor(private readonly options: KeyFollowerOptions) {
    this.loop = this.run();
  }

  /** Where the follower is: the next offset of each partition it read from. */
  get position(): Cursor {
    return this.next;
  }

  /**
   * Resolves once the follower has read `partitions` up to their heads as of now; rejects with
   * LogUnavailableError when that takes more than `timeoutMs`, or when the following stopped.
   */
  async catchUp(partitions: readonly number[], timeoutMs: number): Promise<void> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new LogUnavailableError(
              `the heads of the key topic ${this.options.topic} were not read within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      const heads = await Promise.race([
        Promise.all(
          partitions.map(async (partition) => [partition, await this.options.heads.head(partition)] as const),
        ),
        expired,
      ]);
      await this.reach(new Map(heads), Math.max(1, timeoutMs - (performance.now() - started)));
    } catch (error) {
      if (error instanceof LogUnavailableError) throw error;
      throw new LogUnavailableError(
        `the key topic ${this.options.topic} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves once every partition of `target` has been read up to its offset (see catchUp). */
  private reach(target: Cursor, timeoutMs: number): Promise<void> {
    if (cursorReached(this.next, target)) return Promise.resolve();
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        target,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(
            new LogUnavailableError(
              `the key topic ${this.options.topic} was not read up to its head within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Stops the fetch loops and closes their connections (the heads' too); waiters are rejected. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
    this.rejectAll(new LogUnavailableError('the key store is closed'));
    await this.options.heads.close();
  }

  private async run(): Promise<void> {
    const { apply, applied } = this.options;
    try {
      for await (const items of this.batches()) {
        for (const item of items) {
          if (isGap(item)) {
            this.next.set(item.partition, item.next);
            continue;
          }
          apply(item);
          this.next.set(item.position.partition, item.position.offset + 1);
        }
        applied();
        for (const waiter of this.waiters)
          if (cursorReached(this.next, waiter.target)) this.settle(waiter, waiter.resolve);
      }
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.options.failed(this.failure);
      this.rejectAll(this.failure);
    }
  }

  /** The fetched batches of every partition, from `next` on, until close. */
  private async *batches(): AsyncIterable<readonly FollowItem[]> {
    const { kafka, topic, partitions, brokers } = this.options;
    const cluster = fetchGated(groupFreeCluster(kafka, brokers));
    const leaders = leadersViewOf(topic);
    const channel = new ItemChannel<FollowItem>();
    const signal = this.stop.signal;
    let loops: Promise<void>[] = [];
    try {
      await cluster.connect();
      await cluster.addTargetTopic(topic);
      const fail = (error: Error) => channel.fail(error);
      loops = Array.from({ length: partitions }, (_, partition) =>
        followPartition({
          cluster,
          leaders,
          topic,
          partition,
          from: this.next,
          push: (items) => channel.push(items),
          fail,
          signal,
        }).catch(fail),
      );
      yield* channel.drain(signal);
    } finally {
      this.stop.abort();
      leaders.close();
      // A loop waiting on a broker that is away may not notice the abort soon: a close does not wait for it.
      await settleWithin(DISCONNECT_MS, Promise.allSettled(loops));
      await settleWithin(DISCONNECT_MS, cluster.disconnect());
    }
  }

  private rejectAll(error: Error): void {
    for (const waiter of this.waiters) this.settle(waiter, () => waiter.reject(error));
  }

  private settle(waiter: Waiter, settle: () => void): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    settle();
  }
}
