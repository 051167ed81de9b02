// A producer that is replaced after a failed send. kafkajs' idempotent producer takes back the
// sequence numbers of a produce request that failed (sendMessages.js) and gives them to the next
// request of those partitions. When the failed request had in fact been written (its answer lost as
// the broker stopped), the broker takes that next request for a duplicate of it: it answers with
// the first request's offset and writes nothing, so an acknowledged write is lost (seen in
// test/kafka/faults.test.ts: report 500 answered 200 at the offset that holds report 107). Java's
// producer bumps its epoch after such a failure; kafkajs cannot, so after a failed send the next
// send goes out on a new producer (a new producer id, its sequences from zero), and the old one is
// disconnected once its sends in flight have settled.
//
// kafkajs can also answer a send without sending it: a partition its metadata does not list is
// skipped (findLeaderForPartitions), and a send of nothing else resolves with an empty answer. Seen
// in `make chaos` (two-down behind proxies): after two brokers came back, one instance's key
// producer answered every send with [] for the rest of the run, and each create it acknowledged had
// a key that was never written. An answer that does not name every partition sent to renews the
// producer like a failure; it is passed on as it came, and its callers (positionsOf, offsetsOf)
// take a partition without an offset for one not written: 503, retrying is safe.
import type { ProducerRecord, RecordMetadata } from 'kafkajs';

/** What of a kafkajs producer this needs (a Producer is one). */
export interface Sender {
  connect(): Promise<void>;
  send(record: ProducerRecord): Promise<RecordMetadata[]>;
  disconnect(): Promise<void>;
}

interface Generation<P extends Sender> {
  readonly producer: P;
  readonly connected: Promise<void>;
  inFlight: number;
  retired: boolean;
}

export interface RenewingProducerOptions<P extends Sender> {
  /** A new producer (not connected); called at construction and after each failed send. */
  readonly create: () => P;
  /** Told each replacement, with the failure that caused it (for the log). */
  readonly onRenewed?: (error: unknown) => void;
  /** Disconnects a producer, bounded (a broker that does not answer must not hold a disconnect for ever). */
  readonly disconnect?: (producer: P) => Promise<void>;
}

/** A send kafkajs resolved without an answer for some of its partitions (told to onRenewed): nothing says those were written. */
export class UnansweredPartitionsError extends Error {
  constructor(
    readonly topic: string,
    readonly partitions: readonly number[],
  ) {
    super(
      `Kafka's client answered a produce request without partition ${partitions.join(', ')} of ${topic}: it may not have been sent`,
    );
    this.name = 'UnansweredPartitionsError';
  }
}

/** The partitions `record` sends to that `answer` holds no entry for (messages without a partition are not checked). */
export function partitionsUnanswered(record: ProducerRecord, answer: readonly RecordMetadata[]): number[] {
  const sent = new Set<number>();
  for (const { partition } of record.messages) if (partition !== undefined && partition !== null) sent.add(partition);
  for (const entry of answer) if (entry.topicName === record.topic) sent.delete(entry.partition);
  return [...sent].sort((a, b) => a - b);
}

export class RenewingProducer<P extends Sender = Sender> {
  private current: Generation<P>;
  private readonly retiring = new Set<Generation<P>>();
  private renewals = 0;
  private closed = false;

  constructor(private readonly options: RenewingProducerOptions<P>) {
    this.current = { producer: options.create(), connected: Promise.resolve(), inFlight: 0, retired: false };
  }

  /** How many times the producer was replaced after a failed send. */
  renewed(): number {
    return this.renewals;
  }

  /** Connects the first producer (its failure is the caller's: nothing is replaced). */
  async connect(): Promise<void> {
    await this.current.producer.connect();
  }

  async send(record: ProducerRecord): Promise<RecordMetadata[]> {
    const generation = this.current;
    generation.inFlight += 1;
    try {
      await generation.connected;
      const answer = await generation.producer.send(record);
      const unanswered = partitionsUnanswered(record, answer);
      if (unanswered.length > 0) this.renew(generation, new UnansweredPartitionsError(record.topic, unanswered));
      return answer;
    } catch (error) {
      this.renew(generation, error);
      throw error;
    } finally {
      generation.inFlight -= 1;
      if (generation.retired && generation.inFlight === 0) void this.retire(generation);
    }
  }

  async disconnect(): Promise<void> {
    this.closed = true;
    const all = [this.current, ...this.retiring];
    this.retiring.clear();
    await Promise.all(all.map((generation) => this.disconnectOne(generation.producer)));
  }

  private renew(failed: Generation<P>, error: unknown): void {
    if (failed !== this.current || this.closed) return;
    failed.retired = true;
    this.retiring.add(failed);
    const producer = this.options.create();
    const connected = producer.connect();
    // A send waits for it; one that fails to connect fails that send, which renews again.
    connected.catch(() => undefined);
    this.current = { producer, connected, inFlight: 0, retired: false };
    this.renewals += 1;
    this.options.onRenewed?.(error);
  }

  private async retire(generation: Generation<P>): Promise<void> {
    if (!this.retiring.delete(generation)) return;
    await this.disconnectOne(generation.producer);
  }

  private async disconnectOne(producer: P): Promise<void> {
    await (this.options.disconnect ?? ((p: P) => p.disconnect()))(producer).catch(() => undefined);
  }
}
