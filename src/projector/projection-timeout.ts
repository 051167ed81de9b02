// What both waiters (record-waiters.ts, catch-up-waiters.ts) reject with when the projection does
// not get there in time; the service maps it to 503.
import type { LogPosition } from '../log/event-log.js';

export class ProjectionTimeoutError extends Error {
  constructor(readonly position: LogPosition) {
    super(`the projection did not reach ${position.partition}:${position.offset} in time`);
    this.name = 'ProjectionTimeoutError';
  }
}
