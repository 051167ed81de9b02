// What /readyz and the writers learn about the Kafka log: available, unavailable (an outage: 503,
// retry), or refusing writes until an operator acts (the topic changed under the history).
// Available means this instance can get a write acknowledged now: its own produce requests say so
// first (write-health.ts); only while it writes nothing does the probe (the partitions' leaders
// asked for their heads, every couple of seconds: probe.ts) decide. A probe alone said "available"
// while every write waited on a paused broker.
import type { Logger } from 'pino';
import { LogUnavailableError, type LogHealth, type LogRefusingWritesError } from '../event-log.js';
import { isConnectivityFailure, KafkaRefusedError } from './errors.js';
import { REPARTITION_HINT } from './partition-count.js';
import type { WriteHealth } from './write-health.js';

export class KafkaHealth {
  /** The probe's last word: undefined when it was answered. */
  private probeFailure: string | undefined;
  /** Set once the partition count is found changed: writes stay refused until a restart on a fixed topic. */
  private refusal: LogRefusingWritesError | undefined;
  /** What the last `report` logged, so each change is logged once. */
  private reportedAvailable = true;

  constructor(
    private readonly logger: Logger,
    private readonly topic: string,
    readonly writes: WriteHealth,
    /** Monotonic, as WriteHealth's times are. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  current(): LogHealth {
    if (this.refusal) return { available: false, reason: this.refusal.message, publicReason: this.refusal.message };
    const writes = this.writes.verdict(this.now());
    if (writes.kind === 'answering') return { available: true };
    if (writes.kind !== 'idle') return { available: false, reason: `Kafka takes no writes: ${writes.reason}` };
    return this.probeFailure === undefined ? { available: true } : { available: false, reason: this.probeFailure };
  }

  /** Throws the refusal, if writes are refused. */
  checkWritable(): void {
    if (this.refusal) throw this.refusal;
  }

  /** A failed request as the writer or reader sees it: an outage is 503 (retry), a refusal is not. */
  failed(error: unknown): Error {
    return isConnectivityFailure(error) ? unavailable(error) : new KafkaRefusedError(error);
  }

  /** The probe got no answer (or an outage's error). */
  probeFailed(error: unknown): LogUnavailableError {
    const failure = unavailable(error);
    this.probeFailure = failure.message;
    return failure;
  }

  probeAnswered(): void {
    this.probeFailure = undefined;
  }

  /** Logs a change of availability since the last report, once (the probe calls this on each round). */
  report(): void {
    // A refusal has its own error line.
    if (this.refusal) return;
    const health = this.current();
    if (health.available === this.reportedAvailable) return;
    this.reportedAvailable = health.available;
    if (health.available) this.logger.info({ topic: this.topic }, 'the Kafka event log is available again');
    else this.logger.warn({ topic: this.topic, reason: health.reason }, 'the Kafka event log became unavailable');
  }

  /** Refuses writes from now on, with one error line saying how to repartition. */
  refuseWrites(problem: LogRefusingWritesError | undefined): void {
    if (problem === undefined || this.refusal) return;
    this.refusal = problem;
    this.logger.error({ topic: this.topic }, `${problem.message}; ${REPARTITION_HINT}`);
  }
}

function unavailable(error: unknown): LogUnavailableError {
  return new LogUnavailableError(`Kafka is unreachable: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
