// A record's digest: what names one record of one history. A snapshot keeps the digest of the last
// record it folded (its anchor), and the file log checks it where a snapshot says its history ends
// before resuming its scan there. Event ids are random, so two histories never share a record.
import { createHash } from 'node:crypto';
import type { LogMessage } from './event-log.js';

export function recordDigest({ key, value }: Pick<LogMessage, 'key' | 'value'>): string {
  return createHash('sha256').update(key).update('\0').update(value).digest('hex').slice(0, 32);
}
