// Which Kafka brokers this instance cannot reach, for the operator: one warning when a broker
// becomes unreachable and one info line when it answers again, however many connections, retries
// and clients (producer, admin, consumers) fail meanwhile; kafkajs' own log said the same at error
// level hundreds of times per fault. The count of outages goes to /metrics.
import type { Logger } from 'pino';

/** What kafkajs reports of a request, through its instrumentation events. */
interface RequestEvent {
  readonly payload: { readonly broker: string };
}

/** A kafkajs producer, admin or consumer: what `watch` listens to. */
export interface Instrumented {
  readonly events: { readonly REQUEST: string; readonly REQUEST_TIMEOUT: string };
  on(event: string, listener: (event: RequestEvent) => void): unknown;
}

export class BrokerReachability {
  private readonly unreachable = new Set<string>();
  private lost = 0;
  private rechecking = false;

  constructor(private readonly logger: Logger) {}

  /** Times a broker became unreachable since start. */
  get outages(): number {
    return this.lost;
  }

  /** A connection to `broker` failed or a request to it timed out. */
  failed(broker: string, reason: string): void {
    if (this.unreachable.has(broker)) return;
    this.unreachable.add(broker);
    this.lost += 1;
    this.logger.warn({ broker, reason }, 'a Kafka broker is unreachable');
  }

  /** A request to `broker` was answered. */
  answered(broker: string): void {
    if (this.unreachable.delete(broker)) this.logger.info({ broker }, 'the Kafka broker answers again');
  }

  /**
   * Asks every unreachable broker again with `ask` (a request to that broker alone), at most one
   * round at a time: a broker that came back but leads nothing gets no request from the clients,
   * so its return would not be noticed otherwise.
   */
  async recheck(ask: (broker: string) => Promise<void>): Promise<void> {
    if (this.rechecking || this.unreachable.size === 0) return;
    this.rechecking = true;
    try {
      await Promise.all(
        [...this.unreachable].map(async (broker) => {
          try {
            await ask(broker);
            this.answered(broker);
          } catch {
            // Still unreachable: said once already.
          }
        }),
      );
    } finally {
      this.rechecking = false;
    }
  }

  /** Follows the requests of a kafkajs client: answered ones mark their broker reachable, timed-out ones not. */
  watch(client: Instrumented): void {
    client.on(client.events.REQUEST, ({ payload }) => this.answered(payload.broker));
    client.on(client.events.REQUEST_TIMEOUT, ({ payload }) => this.failed(payload.broker, 'a request timed out'));
  }
}
