// Whether events.log's name still leads to the file the writer holds open. A data directory moved or
// deleted under a running server (`mv`, `rm -rf`, an unmounted volume) left it acknowledging writes
// into a file nothing would read again, /readyz saying ready (an operator review: 200 to creates
// after `rm -rf` of the directory); a restart on the old path would then start a new, empty store.
// Looked at every second; once the name leads elsewhere (or nowhere), writes are refused for good.
import { lstat, type FileHandle } from 'node:fs/promises';

const LOOK_EVERY_MS = 1_000;

export class PlaceWatch {
  private timer: NodeJS.Timeout | undefined;
  private looking = false;

  constructor(
    private readonly path: string,
    private readonly file: FileHandle,
    /** Told once, with what became of the name. */
    private readonly onLost: (what: string) => void,
    private readonly everyMs = LOOK_EVERY_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), this.everyMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look (the timer's; tests call it). */
  async look(): Promise<void> {
    if (this.looking || this.timer === undefined) return;
    this.looking = true;
    try {
      const held = await this.file.stat();
      const named = await lstat(this.path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
        throw error;
      });
      if (this.timer === undefined) return;
      if (named === undefined) this.lost(`${this.path} no longer exists`);
      else if (named.dev !== held.dev || named.ino !== held.ino) this.lost(`${this.path} is another file now`);
    } catch {
      // A look that fails (EIO, a closed handle at shutdown) tells nothing: the next one may.
    } finally {
      this.looking = false;
    }
  }

  private lost(what: string): void {
    this.stop();
    this.onLost(what);
  }
}
