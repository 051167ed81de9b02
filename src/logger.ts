import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';

/** Structured JSON logs. The destination is injected so tests can capture lines in memory. */
export function createLogger(level: Config['logLevel'], destination?: DestinationStream): Logger {
  return pino({ level, base: { service: 'report-store' }, redact: ['authorization', 'token'] }, destination);
}
