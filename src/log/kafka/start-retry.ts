// A start that finds no broker of KAFKA_BROKERS answering (all down, or the only seed broker
// paused, when kafkajs gives up with "Broker not connected" or "does not host this
// topic-partition") waits for one rather than exiting: a service started with its cluster (a
// compose file, a reboot) would otherwise need a supervisor's restarts to come up. It says so in
// one line, tries again with a growing pause, and starts when any broker answers; once
// KAFKA_START_TIMEOUT_MS has passed it stops with the last reason. Only outages are waited out: a
// refusal (a rejected password, an unsafe topic) stops the start at once, as before.
import type { Logger } from 'pino';
import { isConnectivityFailure } from './errors.js';

export interface StartRetryOptions {
  /** KAFKA_START_TIMEOUT_MS: how long the start keeps trying (0: once). */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** KAFKA_BROKERS, for the lines. */
  readonly brokers: readonly string[];
  /** What is being opened, for the lines ("the event topic", "the key topic"). */
  readonly what: string;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 5_000;

/** Whether a start failure (describeStartError's, which keeps what kafkajs threw as its cause) is an outage. */
export function outageAtStart(error: unknown): boolean {
  return error instanceof Error && error.cause !== undefined && isConnectivityFailure(error.cause);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function openWhenKafkaAnswers<T>(
  open: () => Promise<T>,
  { timeoutMs, logger, brokers, what, sleep = pause, now = () => performance.now() }: StartRetryOptions,
): Promise<T> {
  const started = now();
  for (let attempt = 1; ; attempt += 1) {
    try {
      const opened = await open();
      if (attempt > 1)
        logger.info(
          { brokers, attempts: attempt, seconds: Math.round((now() - started) / 100) / 10 },
          `Kafka answers: opened ${what}`,
        );
      return opened;
    } catch (error) {
      const waitedMs = now() - started;
      if (!outageAtStart(error)) throw error;
      if (waitedMs >= timeoutMs) {
        throw new Error(
          `${(error as Error).message} (no broker answered within KAFKA_START_TIMEOUT_MS, ${timeoutMs} ms)`,
          { cause: (error as Error).cause },
        );
      }
      if (attempt === 1)
        logger.warn(
          { brokers, reason: (error as Error).message, startTimeoutMs: timeoutMs },
          `no broker of KAFKA_BROKERS answers yet for ${what}; trying again until KAFKA_START_TIMEOUT_MS has passed`,
        );
      await sleep(Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), LONGEST_PAUSE_MS, timeoutMs - waitedMs));
    }
  }
}
