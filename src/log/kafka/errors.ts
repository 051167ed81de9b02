// Tells a Kafka outage (retry later, the log is unavailable) from a refusal that no retry will
// change (the request is wrong, the log is fine). Decided on kafkajs' error classes and their
// `retriable` flag, never on message text.
import kafkajs from 'kafkajs';

const { KafkaJSError, KafkaJSNumberOfRetriesExceeded } = kafkajs;

/** The probe got no answer within its interval (the client itself would go on retrying). */
export class ProbeSilenceError extends Error {
  constructor(readonly intervalMs: number) {
    super(`no answer within ${intervalMs} ms`);
    this.name = 'ProbeSilenceError';
  }
}

/** Kafka refused a request for good (for example a record over the topic's max.message.bytes). */
export class KafkaRefusedError extends Error {
  readonly retriable = false;
  constructor(cause: unknown) {
    super(`Kafka refused the request: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'KafkaRefusedError';
  }
}

/** Whether `error` says the broker is out of reach (or slow), rather than that it refused the request. */
export function isConnectivityFailure(error: unknown): boolean {
  if (error instanceof ProbeSilenceError) return true;
  // Retries exhausted: what counts is the error that was being retried.
  if (error instanceof KafkaJSNumberOfRetriesExceeded) return isConnectivityFailure(error.cause ?? true);
  if (error instanceof KafkaJSError) return error.retriable;
  // Anything else (a socket error, a timeout of our own) is taken as an outage: 503 is safe to retry.
  return true;
}
