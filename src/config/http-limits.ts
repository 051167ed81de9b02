// The REPORTS_* settings that bound what the HTTP server allows a client.
import { ConfigError } from './config-error.js';
import { integer } from './env-parsers.js';
import type { Env } from './variables.js';

/** What the HTTP server allows a client before cutting it off (slow and idle clients, connection floods). */
export interface HttpLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
}

export function httpLimits(env: Env): HttpLimits {
  const headersTimeoutMs = integer(env, 'REPORTS_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'REPORTS_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  // Node refuses a headers time-out longer than the whole request's.
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError(
      'REPORTS_HEADERS_TIMEOUT_MS',
      `must not exceed REPORTS_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  return Object.freeze({
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'REPORTS_KEEP_ALIVE_TIMEOUT_MS', 5000, 100, 600_000),
    maxConnections: integer(env, 'REPORTS_MAX_CONNECTIONS', 1000, 1, 1_000_000),
  });
}
