// The feed consumer example (docs/topic-contract.md) is quoted verbatim; test/feed/ runs it against
// servers on both logs and checks its digest against `reports replay`'s.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const quoted = suite('docs/topic-contract.md feed consumer example');
quoted('quotes test/examples/fold-feed.ts verbatim', async () => {
  const [text, source] = await Promise.all([
    readFile(`${root}docs/topic-contract.md`, 'utf8'),
    readFile(`${root}test/examples/fold-feed.ts`, 'utf8'),
  ]);
  assert.ok(
    text.includes(source.trim()),
    'docs/topic-contract.md does not contain the current test/examples/fold-feed.ts',
  );
});
quoted.run();
