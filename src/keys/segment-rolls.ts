// Which partitions of the key topic need a roll record for a destroyed key to be erased. Kafka's
// cleaner never cleans the active segment, and a segment rolls only when a record is appended
// after it is old enough (`min(segment.ms, max.compaction.lag.ms)`, key-topic-settings.ts): a
// tombstone appended last would sit in the active segment, beside the key's record, for as long as
// nothing else is written to that partition. So, from what the follower reads, this tracks per
// partition the newest tombstone that may still be in the active segment, and says when a roll
// record (ROLL_KEY, no value) is due there. Every instance tracks every partition, so a destroy
// whose instance stopped right after it is rolled by the others (or by the next to start).
// Pure: the store arms the timer and writes the records.

export class SegmentRolls {
  /** Per partition: the timestamp of the newest tombstone whose segment may not have rolled. */
  private readonly unrolled = new Map<number, number>();

  constructor(
    /** How old the active segment must be for an append to roll it. */
    private readonly rollAfterMs: number,
    /** How long after that this instance writes the roll record (a margin, and a spread of its own). */
    private readonly delayMs: number,
  ) {}

  /** A record of `partition` appended at `timestampMs`, as the follower read it, in order. */
  seen(partition: number, timestampMs: number, tombstone: boolean): void {
    const newest = this.unrolled.get(partition);
    // Every tombstone pending here is at most `newest`, and the segment holding them began no later
    // than the oldest: an append this much later rolled it (the broker rolls on the record's time).
    if (newest !== undefined && timestampMs > newest + this.rollAfterMs) this.unrolled.delete(partition);
    if (tombstone) this.unrolled.set(partition, Math.max(timestampMs, this.unrolled.get(partition) ?? timestampMs));
  }

  /** The partitions whose roll record is due at `nowMs`. */
  due(nowMs: number): number[] {
    return [...this.unrolled].filter(([, newest]) => nowMs >= this.dueAt(newest)).map(([partition]) => partition);
  }

  /** When the next roll record falls due (epoch milliseconds), or undefined when none is needed. */
  nextDueMs(): number | undefined {
    let next: number | undefined;
    for (const newest of this.unrolled.values()) next = Math.min(next ?? Infinity, this.dueAt(newest));
    return next;
  }

  private dueAt(newest: number): number {
    return newest + this.rollAfterMs + this.delayMs;
  }
}
