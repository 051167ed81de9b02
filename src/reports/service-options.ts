// What a ReportService is built from (server.ts wires them): the log, the key store and the
// projector it writes through, the write timeout, and the callbacks metrics and the feeds hang on.
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { KeyId, KeyStore } from '../keys/key-store.js';
import type { EventLog } from '../log/event-log.js';
import type { Projector } from '../projector/projector.js';
import type { EnvelopeContext } from './envelope.js';

export interface ReportServiceOptions extends EnvelopeContext {
  readonly log: EventLog;
  /** Where the keys that seal names and tags live (src/keys/). */
  readonly keys: KeyStore;
  readonly projector: Projector;
  readonly writeTimeoutMs: number;
  readonly logger: Logger;
  /** Called with the duration of every successful append (metrics). */
  readonly onAppend?: (durationMs: number) => void;
  /** Called for every write decided again after its event was void (an extra append; metrics). */
  readonly onDecidedAgain?: () => void;
  /** Called for every read of a partition's head before an answer that writes nothing (metrics). */
  readonly onHeadRead?: () => void;
  /** Spans around appends and read-your-writes waits (default: the global OpenTelemetry tracer, a no-op without an SDK). */
  readonly tracer?: Tracer;
  /** Called with the keys destroyed, once the store confirms it (the feeds: feed-hub.ts `erased`). */
  readonly onKeysErased?: (ids: readonly KeyId[]) => void;
  /** A monotonic clock in milliseconds for deadlines (tests may pass a fake one). */
  readonly clockMs?: () => number;
}
