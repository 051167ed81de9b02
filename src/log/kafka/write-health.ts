// Whether this instance can get a write acknowledged by Kafka now, judged first by its own produce
// requests and, when it has none out, by what the cluster's metadata says of each partition. A
// metadata or offsets probe that answers proves little: with the leader of a partition paused, or
// two of three brokers down, the probe's broker answers while no produce request does. The
// detector is pure: the lanes and the probe tell it what happened, and asking does not change the
// answer.

/** What the probe last read of the topic's partitions. */
export interface PartitionMetadata {
  readonly partitionId: number;
  /** The leader's node id; negative when the partition has none. */
  readonly leader: number;
  readonly isr: readonly number[];
}

/**
 * `answering`: a produce request was acknowledged lately; `stuck`: requests are out and none was
 * answered for a while; `unreplicated`: no partition can take an acks=all write; `idle`: no
 * evidence either way (nothing written lately, the metadata looks fine).
 */
export type WriteVerdict =
  | { readonly kind: 'answering' }
  | { readonly kind: 'idle' }
  | { readonly kind: 'stuck' | 'unreplicated'; readonly reason: string };

const ANSWERING: WriteVerdict = Object.freeze({ kind: 'answering' });
const IDLE: WriteVerdict = Object.freeze({ kind: 'idle' });

export class WriteHealth {
  /** Per partition: when the lane's produce request now out was sent. */
  private readonly outstandingSinceMs: (number | undefined)[];
  private lastAnswerMs = Number.NEGATIVE_INFINITY;
  /** When the latest-sent request that was answered had been sent. */
  private lastAnsweredSentMs = Number.NEGATIVE_INFINITY;
  /** Partitions the last metadata showed with a leader and enough replicas in sync (undefined: not probed yet). */
  private writablePartitions: number | undefined;

  constructor(
    private readonly partitions: number,
    /** A produce request out longer than this counts as stuck (no answer coming soon). */
    private readonly stuckAfterMs: number,
    /** min.insync.replicas of the topic: fewer replicas in sync and acks=all writes are refused. */
    private readonly minInsyncReplicas: number,
  ) {
    this.outstandingSinceMs = new Array<number | undefined>(partitions).fill(undefined);
  }

  sent(partition: number, atMs: number): void {
    this.outstandingSinceMs[partition] = atMs;
  }

  /** The request of `partition` settled: `answered` when the broker acknowledged it. */
  settled(partition: number, answered: boolean, atMs: number): void {
    const sentMs = this.outstandingSinceMs[partition];
    this.outstandingSinceMs[partition] = undefined;
    if (!answered) return;
    this.lastAnswerMs = Math.max(this.lastAnswerMs, atMs);
    if (sentMs !== undefined) this.lastAnsweredSentMs = Math.max(this.lastAnsweredSentMs, sentMs);
  }

  /** The probe's latest view of the partitions. */
  probed(partitions: readonly PartitionMetadata[]): void {
    this.writablePartitions = partitions.filter(
      ({ leader, isr }) => leader >= 0 && isr.length >= this.minInsyncReplicas,
    ).length;
  }

  verdict(nowMs: number): WriteVerdict {
    // Judged in the order requests were sent: a request out longer than the stuck interval counts
    // only when none sent after it was answered. Judged by when answers came, a partition's request
    // answered late (sent before a fault) said "writes get through" while every request sent since
    // waited; and the one request of a paused partition said "stuck" while later ones on the
    // healthy partitions were answered.
    const stuck = this.outstandingSinceMs.filter(
      (since) => since !== undefined && since > this.lastAnsweredSentMs && nowMs - since > this.stuckAfterMs,
    ).length;
    if (stuck > 0)
      return {
        kind: 'stuck',
        reason: `no produce request sent in the last ${this.stuckAfterMs} ms was answered: ${stuck} of ${this.partitions} partitions have one waiting`,
      };
    // An acknowledgement within the last stuck interval: writes get through now (on some partitions at least).
    if (nowMs - this.lastAnswerMs <= this.stuckAfterMs) return ANSWERING;
    if (this.writablePartitions === 0)
      return {
        kind: 'unreplicated',
        reason: `no partition has a leader with ${this.minInsyncReplicas} replicas in sync (min.insync.replicas)`,
      };
    return IDLE;
  }
}
