// What /readyz and the writers learn about the Kafka log: available, unreachable (an outage: 503,
// retry), or refusing writes until an operator acts (the topic changed under the history).
import type { Logger } from 'pino';
import { LogUnavailableError, type LogHealth, type LogRefusingWritesError } from './event-log.js';
import { isConnectivityFailure, KafkaRefusedError } from './kafka-errors.js';
import { REPARTITION_HINT } from './kafka-partitions.js';

export class KafkaHealth {
  private reachable: LogHealth = { available: true };
  /** Set once the partition count is found changed: writes stay refused until a restart on a fixed topic. */
  private refusal: LogRefusingWritesError | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly topic: string,
  ) {}

  current(): LogHealth {
    if (this.refusal) return { available: false, reason: this.refusal.message, publicReason: this.refusal.message };
    return this.reachable;
  }

  /** Throws the refusal, if writes are refused. */
  checkWritable(): void {
    if (this.refusal) throw this.refusal;
  }

  /** An outage makes the log unavailable; a refusal of one request leaves its health as it is. */
  failed(error: unknown): Error {
    return isConnectivityFailure(error) ? this.unreachable(error) : new KafkaRefusedError(error);
  }

  unreachable(error: unknown): LogUnavailableError {
    const reason = `Kafka is unreachable: ${error instanceof Error ? error.message : String(error)}`;
    if (this.reachable.available) this.logger.warn({ reason }, 'the Kafka event log became unavailable');
    this.reachable = { available: false, reason };
    return new LogUnavailableError(reason, { cause: error });
  }

  answered(): void {
    if (!this.reachable.available) this.logger.info('the Kafka event log is available again');
    this.reachable = { available: true };
  }

  /** Refuses writes from now on, with one error line saying how to repartition. */
  refuseWrites(problem: LogRefusingWritesError | undefined): void {
    if (problem === undefined || this.refusal) return;
    this.refusal = problem;
    this.logger.error({ topic: this.topic }, `${problem.message}; ${REPARTITION_HINT}`);
  }
}
