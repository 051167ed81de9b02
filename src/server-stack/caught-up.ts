// What a stack runs once its projector has caught up with the head seen at start: the key store is
// checked against what the log refers to before the projector is ready (no request is served on a
// store that fails), then the start's key upkeep runs and automatic snapshots may begin.
import type { Logger } from 'pino';
import type { KeyStore } from '../keys/key-store.js';
import {
  checkKeysOpenContent,
  checkNewestKeyHeld,
  KeysNotHeldError,
  KeysOfAnotherStoreError,
} from '../keys/key-upkeep.js';
import type { StartUpkeep } from '../keys/start-upkeep.js';
import type { ReadModel } from '../read-model/read-model.js';
import type { AutoSnapshot } from '../snapshot/auto-snapshot.js';

export interface CaughtUpParts {
  readonly model: ReadModel;
  readonly keys: KeyStore;
  readonly logger: Logger;
  readonly onFatal: (error: Error) => void;
  readonly upkeep: Pick<StartUpkeep, 'caughtUp'>;
  readonly autoSnapshot: Pick<AutoSnapshot, 'onCaughtUp'>;
}

/** The projector's `beforeReady` and `onCaughtUp`: a key store that is not the log's is fatal, and the projector never ready. */
export function createOnCaughtUp({ model, keys, logger, onFatal, upkeep, autoSnapshot }: CaughtUpParts): {
  readonly beforeReady: () => Error | undefined;
  readonly onCaughtUp: () => void;
} {
  const beforeReady = (): Error | undefined => {
    try {
      checkNewestKeyHeld(model, keys);
      checkKeysOpenContent(model, keys);
      return undefined;
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      const refused = error instanceof KeysNotHeldError || error instanceof KeysOfAnotherStoreError;
      logger.fatal(
        { err: error },
        refused
          ? 'the key store does not hold the keys the event log refers to'
          : "the start's check of the key store against the event log failed",
      );
      onFatal(error);
      return error;
    }
  };
  const onCaughtUp = (): void => {
    // Before the snapshot it may take: the deletions still to erase (the loaded snapshot's among
    // them) are the service's by then, and that snapshot lists them.
    try {
      upkeep.caughtUp();
    } finally {
      autoSnapshot.onCaughtUp();
    }
  };
  return { beforeReady, onCaughtUp };
}
