// The events this process encoded for its own appends, found again by the very Buffer of their
// bytes: the log hands those appends back (CommitFeed) with the same buffers, and the projector and
// the feed take the event from here instead of parsing what was just serialised. The log carries
// bytes only and knows nothing of it; a record read back from the log is a new buffer, and decoded.
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';

export class EncodedEvents {
  /** Weak: an event lives as long as its bytes are held (by the log's queue, a batch, a feed). */
  private readonly events = new WeakMap<Buffer, ReportEvent>();

  /** The bytes of `event`, remembered with it. */
  encode(event: ReportEvent): Buffer {
    const value = encodeEvent(event);
    this.events.set(value, event);
    return value;
  }

  /** The event `value` was encoded from here, if it was; undefined for any other buffer, even with the same bytes. */
  eventOf(value: Buffer): ReportEvent | undefined {
    return this.events.get(value);
  }
}
