// What a stack is wired with, what the app over it is built from, and what an open stack offers
// (server-stack.ts opens it; restartable.ts opens it again after the data directory was read-only).
import type { Tracer } from '@opentelemetry/api';
import type { RequestListener } from 'node:http';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { FeedHub } from '../feed/feed-hub.js';
import type { KeyStore } from '../keys/key-store.js';
import type { EventLog } from '../log/event-log.js';
import type { Projector } from '../projector/projector.js';
import type { ReportService } from '../reports/service.js';
import type { TokenReloadFigures } from '../tokens/token-reloader.js';
import type { CurrentTokens } from '../tokens/token-set.js';

/** What the stack is wired with from the server's part that outlives it. */
export interface StackWiring {
  readonly logger: Logger;
  readonly onFatal: (error: Error) => void;
  readonly tokens: CurrentTokens;
  readonly tokenReloads: () => TokenReloadFigures;
  readonly tracer?: Tracer;
}

/** What the app is built over. */
export interface StackParts extends Omit<StackWiring, 'onFatal'> {
  readonly log: EventLog;
  readonly keys: KeyStore;
  readonly projector: Projector;
}

export type WireApp = (parts: StackParts) => { app: Koa; service: ReportService; feeds: FeedHub };

export interface Stack {
  readonly log: EventLog;
  readonly keys: KeyStore;
  readonly projector: Projector;
  readonly feeds: FeedHub;
  readonly handle: RequestListener;
  /** Closes everything, newest first; with `digest`, resolves with the state digest of what was folded (when the key store could be read). */
  close(options: { readonly digest: boolean }): Promise<string | undefined>;
}
