// The state digest a stack's close gives when asked (the server's close resolves with it, as
// `reports replay` prints it): taken by a closer the stack registers, so that it reads the model and
// the key store in between the projector stopping and the key store closing.
import type { Logger } from 'pino';
import type { KeyStore } from '../keys/key-store.js';
import { stateDigest } from '../projector/fold-log.js';
import type { ReadModel } from '../read-model/read-model.js';

export class StateDigestAtClose {
  private wanted = false;
  private digest: string | undefined;

  constructor(
    private readonly model: ReadModel,
    private readonly keys: KeyStore,
    private readonly logger: Logger,
  ) {}

  /** Whether the close about to run takes the digest. */
  want(wanted: boolean): void {
    this.wanted = wanted;
  }

  /** The closer: reads the keys held without waiting on a broker (never at shutdown). */
  async take(): Promise<void> {
    if (!this.wanted) return;
    const lookup = await this.keys
      .lookup({ fresh: false })
      .catch(
        (error: unknown) => void this.logger.warn({ err: error }, 'could not read the key store for the state digest'),
      );
    this.digest = lookup === undefined ? undefined : stateDigest(this.model.reports, lookup);
  }

  /** The digest taken, if it was wanted and the key store could be read. */
  taken(): string | undefined {
    return this.digest;
  }
}
