// What the file key store throws. A key store that cannot be read must stop the start: taken for
// empty, it would read as "every key destroyed", and every report's content as erased.
import { LogUnavailableError } from '../log/event-log.js';

/** keys.db is there but is no key store this version reads (header damaged, other format). */
export class KeyStoreDamagedError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path} is unusable: ${reason}; refusing to start rather than read every key as destroyed`);
    this.name = 'KeyStoreDamagedError';
  }
}

/** keys.db is missing where it must exist (the log already refers to keys). */
export class KeyStoreMissingError extends Error {
  constructor(readonly path: string) {
    super(`${path} is missing; refusing to start rather than read every key as destroyed`);
    this.name = 'KeyStoreMissingError';
  }
}

/**
 * Keys cannot be written now (a write failed, or the store is closed): the service answers 503 as
 * it does when the log cannot take an append, so it is one of the log's unavailability errors.
 */
export class KeyStoreUnavailableError extends LogUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyStoreUnavailableError';
  }
}

/** A put of a key this store did not mint, or one put (or destroyed) already: a caller's mistake. */
export class KeyNotMintedError extends Error {
  readonly retriable = false;
  constructor(readonly keyIdText: string) {
    super(`key ${keyIdText} was not minted by this key store, or was put or destroyed already`);
    this.name = 'KeyNotMintedError';
  }
}
