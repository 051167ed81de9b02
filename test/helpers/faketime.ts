// A wall clock that jumps, for one process: libfaketime (Debian's `libfaketime`) preloaded, reading
// its offset from a file the test rewrites ("+1h", "-1h", "+0"). The monotonic clock is left
// alone (FAKETIME_DONT_FAKE_MONOTONIC), as when NTP or an operator steps the wall clock.
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './server.js';

const CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1',
  '/usr/lib/faketime/libfaketimeMT.so.1',
  '/usr/local/lib/faketime/libfaketimeMT.so.1',
];

/** The multi-threaded libfaketime (node runs threads), or undefined when it is not installed. */
export function libfaketimePath(): string | undefined {
  return CANDIDATES.find((path) => existsSync(path));
}

export interface JumpingClock {
  /** The environment of a process whose wall clock this moves. */
  readonly env: Readonly<Record<string, string>>;
  /** Sets the offset from the real wall clock ("+1h", "-1h", "+0"); processes see it within a second. */
  set(offset: string): Promise<void>;
  dispose(): Promise<void>;
}

export async function jumpingClock(): Promise<JumpingClock> {
  const library = libfaketimePath();
  if (library === undefined)
    throw new Error('libfaketime is not installed (apt-get install libfaketime): the clock-jump tests need it');
  const dir = await tempDir('reports-faketime-');
  const specFile = join(dir, 'offset');
  await writeFile(specFile, '+0\n');
  return {
    env: {
      LD_PRELOAD: library,
      FAKETIME_TIMESTAMP_FILE: specFile,
      FAKETIME_CACHE_DURATION: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
    set: (offset) => writeFile(specFile, `${offset}\n`),
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}
