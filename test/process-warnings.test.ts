// The process warning filter (src/process-warnings.ts): kafkajs' negative throttle timer no longer
// prints a TimeoutNegativeWarning on every Kafka server's and tool's stderr; this program's own
// negative timer, and every other warning, still print as Node prints them. Each case in a Node
// process of its own (Node raises that warning once a process), with a module under a `kafkajs`
// folder standing for kafkajs' request queue.
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from './helpers/server.js';

const FILTER = fileURLToPath(new URL('../src/process-warnings.js', import.meta.url));
const warnings = suite<{ dir: string }>('process warnings');

warnings.before(async (context) => {
  context.dir = await tempDir('reports-warnings-');
  await mkdir(join(context.dir, 'node_modules', 'kafkajs'), { recursive: true });
  // As kafkajs' requestQueue does when no broker throttles it: throttledUntil is -1.
  await writeFile(
    join(context.dir, 'node_modules', 'kafkajs', 'queue.cjs'),
    [
      'exports.schedule = () => setTimeout(() => {}, -1 - Date.now());',
      // What the timer raises on Node 24 (Node 20 raises nothing), raised here on every line.
      "exports.warn = () => process.emitWarning('-1795 is a negative number.', 'TimeoutNegativeWarning');",
      '',
    ].join('\n'),
  );
});
warnings.after(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

/** stderr of a Node process that installs the filter (or not), then runs `body`. */
async function stderrOf(dir: string, body: string, filtered = true): Promise<string> {
  const script = join(dir, `case-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(
    script,
    [
      `import { createRequire } from 'node:module';`,
      `import { dropKafkajsNegativeTimeouts } from ${JSON.stringify(FILTER)};`,
      `const kafkajsQueue = createRequire(import.meta.url)('./node_modules/kafkajs/queue.cjs');`,
      filtered ? 'dropKafkajsNegativeTimeouts();' : '',
      body,
    ].join('\n'),
  );
  const { stderr } = await promisify(execFile)(process.execPath, [script], { cwd: dir });
  return stderr;
}

warnings('drops a TimeoutNegativeWarning raised from kafkajs', async ({ dir }) => {
  assert.match(await stderrOf(dir, 'kafkajsQueue.warn();', false), /TimeoutNegativeWarning/);
  assert.is(await stderrOf(dir, 'kafkajsQueue.warn();'), '');
});

warnings('prints nothing for the negative timer kafkajs sets (a warning on Node 24)', async ({ dir }) => {
  assert.is(await stderrOf(dir, 'kafkajsQueue.schedule();'), '');
});

warnings("still prints a TimeoutNegativeWarning raised from this program's code", async ({ dir }) => {
  const stderr = await stderrOf(dir, "process.emitWarning('-5 is a negative number.', 'TimeoutNegativeWarning');");
  assert.match(stderr, /TimeoutNegativeWarning: -5 is a negative number/);
});

warnings('still prints every other warning', async ({ dir }) => {
  const stderr = await stderrOf(dir, "kafkajsQueue.warn(); process.emitWarning('kept', 'OtherWarning');");
  assert.match(stderr, /OtherWarning: kept/);
  assert.not.match(stderr, /TimeoutNegativeWarning/);
});

warnings.run();
