// A start that finds no broker of KAFKA_BROKERS answering (all down, or the only seed broker
// paused, when kafkajs gives up with "Broker not connected" or "does not host this
// topic-partition") waits for one rather than exiting: a service started with its cluster (a
// compose file, a reboot) would otherwise need a supervisor's restarts to come up. It says so in
// one line, tries again with a growing pause, and starts when any broker answers; once
// KAFKA_START_TIMEOUT_MS has passed it stops with the last reason. Only outages are waited out: a
// refusal (a rejected password, an unsafe topic) stops the start at once, as before.
// A paused broker (SIGSTOP, a frozen VM) accepts the connection and never answers, so kafkajs' first
// attempt can hang until the broker comes back without failing: the same line is said once that
// attempt has taken SLOW_ATTEMPT_MS, or the operator would watch a silent start.
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
  /** After how long a first attempt that has not answered yet is said to be waiting (tests shorten it). */
  readonly slowAttemptMs?: number;
}

const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 5_000;
const SLOW_ATTEMPT_MS = 3_000;

/** Whether a start failure (describeStartError's, which keeps what kafkajs threw as its cause) is an outage. */
export function outageAtStart(error: unknown): boolean {
  return error instanceof Error && error.cause !== undefined && isConnectivityFailure(error.cause);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function openWhenKafkaAnswers<T>(
  open: () => Promise<T>,
  {
    timeoutMs,
    logger,
    brokers,
    what,
    sleep = pause,
    now = () => performance.now(),
    slowAttemptMs = SLOW_ATTEMPT_MS,
  }: StartRetryOptions,
): Promise<T> {
  const started = now();
  let waitingSaid = false;
  const sayWaiting = (reason: string) => {
    if (waitingSaid) return;
    waitingSaid = true;
    logger.warn(
      { brokers, reason, startTimeoutMs: timeoutMs },
      `no broker of KAFKA_BROKERS answers yet for ${what}; trying again until KAFKA_START_TIMEOUT_MS has passed`,
    );
  };
  for (let attempt = 1; ; attempt += 1) {
    const slow =
      attempt === 1 && timeoutMs > 0
        ? setTimeout(() => sayWaiting(`no answer within ${slowAttemptMs} ms`), slowAttemptMs).unref()
        : undefined;
    try {
      const opened = await open();
      if (waitingSaid)
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
      sayWaiting((error as Error).message);
      await sleep(Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), LONGEST_PAUSE_MS, timeoutMs - waitedMs));
    } finally {
      clearTimeout(slow);
    }
  }
}
