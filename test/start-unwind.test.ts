// A start that fails after the projector started (the port taken between the checks and the
// listen) closes everything it had started: no timer, loop, worker or file handle is left behind,
// and the data directory can be started again at once.
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { pause } from '../src/pause.js';
import { rejection } from './helpers/async.js';
import { memoryLogger, TEST_TOKEN, tempDir } from './helpers/server.js';

/** What keeps this process alive, counted by kind. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

const unwind = suite<{ dir: string }>('a start that fails late');
unwind.before.each(async (context) => {
  context.dir = await tempDir('reports-unwind-');
});
unwind.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

unwind(
  'the port in use at the listen leaves no timer, loop or file handle behind, and the next start succeeds',
  async ({ dir }) => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = other.address() as { port: number };
      const config = loadConfig({
        PORT: String(port),
        HOST: '127.0.0.1',
        REPORTS_TOKENS: TEST_TOKEN,
        REPORTS_DATA_DIR: dir,
      });
      const { logger } = memoryLogger();
      // Some handles (the resolver's, a first fs call's thread pool) are made once per process: warm them first.
      await rejection(
        startServer(config, { logger, announceToken: () => undefined, settingsChecked: true, watchTokensFile: false }),
      );
      await pause(100);
      const before = resources();
      const error = await rejection(
        startServer(config, { logger, announceToken: () => undefined, settingsChecked: true, watchTokensFile: false }),
      );
      assert.instance(error, ConfigError);
      assert.match(String(error), /port .* is in use/);
      await pause(100);
      assert.equal(resources(), before, 'what the failed start left open');
      const again = await startServer(
        { ...config, port: 0 },
        { logger, announceToken: () => undefined, watchTokensFile: false },
      );
      await again.close();
    } finally {
      other.close();
    }
  },
);

unwind.run();
