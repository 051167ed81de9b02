// The README's "Using it" block is executed: a server starts as `make run` starts it (no token
// configured, so it creates data/token), bash runs the block's commands in order from the directory
// holding data/, with curl against the server's own port, and each answer must be the one the README
// shows. Extracted from README.md itself, so the documentation cannot drift from the service.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { memoryLogger } from '../helpers/server.js';
import { answerMatches, answersOf, fencedBlock, scriptOf, shellExamples, type ShellExample } from './readme-shell.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));
const { text, firstLine } = fencedBlock(readFileSync(README, 'utf8'), 'Using it');
const examples = shellExamples(text, firstLine);

function bash(script: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const usingIt = suite<{ dir: string; server: RunningServer; answers: Map<number, string>; stderr: string }>(
  'README "Using it"',
);

usingIt.before(async (context) => {
  context.dir = await mkdtemp(join(tmpdir(), 'reports-readme-'));
  // As a new user's first `make run`: no token configured, the data directory `data` beside the shell.
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    REPORTS_DATA_DIR: join(context.dir, 'data'),
    LOG_LEVEL: 'silent',
  });
  context.server = await startServer(config, {
    logger: memoryLogger().logger,
    announceToken: () => undefined,
    shutdownGraceMs: 2000,
  });
  await context.server.projector.caughtUp();
  const address = new URL(context.server.url).host;
  const script = scriptOf(examples, (command) => command.replaceAll('localhost:8080', address));
  const { stdout, stderr } = await bash(script, context.dir);
  context.answers = answersOf(stdout);
  context.stderr = stderr;
});

usingIt.after(async ({ server, dir }) => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

usingIt('finds the commands of the block, each curl with the answer it shows', () => {
  assert.ok(examples.length >= 15, `only ${examples.length} commands found under "Using it"`);
  const unanswered = examples.filter((example) => example.command.startsWith('curl') && example.answer.length === 0);
  assert.equal(
    unanswered.map((example) => `README.md:${example.line}`),
    [],
  );
});

usingIt('runs every command without an error from the shell or curl', ({ stderr }) => {
  assert.is(stderr, '');
});

const title = (example: ShellExample) =>
  `README.md:${example.line} answers as shown: ${example.command.split('\n')[0]?.slice(0, 90)}`;

for (const [index, example] of examples.entries()) {
  usingIt(title(example), ({ answers }) => {
    const output = answers.get(index);
    assert.ok(output !== undefined, 'the command did not run');
    assert.ok(
      answerMatches(example.answer, output),
      `README.md:${example.line}\n${example.command}\nshows:\n${example.answer.join('\n')}\nanswered:\n${output}`,
    );
  });
}

usingIt.run();

const matching = suite('answerMatches');

matching('compares the whole output, trailing newlines and carriage returns aside', () => {
  assert.ok(answerMatches(['{"name":"x"}'], '{"name":"x"}'));
  assert.ok(answerMatches(['204'], '204\n'));
  assert.ok(
    answerMatches(
      ['HTTP/1.1 405 Method Not Allowed', 'Allow: POST'],
      'HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\n',
    ),
  );
  assert.not.ok(answerMatches(['204'], '404\n'));
  assert.not.ok(answerMatches(['{"name":"x"}'], '{"name":"x"}{"name":"y"}'));
});

matching('takes … for any text on its line and a lone … for any lines', () => {
  assert.ok(answerMatches(['{"openapi":"3.1.0",…}'], '{"openapi":"3.1.0","info":{}}'));
  assert.not.ok(answerMatches(['{"openapi":"3.1.0",…}'], '{"asyncapi":"3.0.0"}'));
  assert.ok(
    answerMatches(
      ['HTTP/1.1 401 Unauthorized', '…', '{"error":401,…}'],
      'HTTP/1.1 401 Unauthorized\r\nA: b\r\nC: d\r\n\r\n{"error":401,"message":"m"}',
    ),
  );
  assert.ok(answerMatches(['a', '…', 'b'], 'a\nb'));
});

matching('expects no output from a command shown without an answer', () => {
  assert.ok(answerMatches([], ''));
  assert.not.ok(answerMatches([], 'something'));
});

matching.run();

const parsing = suite('shellExamples');

parsing('joins continued lines and takes the comments right after a command as its answer', () => {
  const block = [
    '# explained',
    'curl -s a \\',
    '     -d x',
    '# {"ok":true}',
    '',
    '# next: explained',
    'H=1',
    'curl b',
    '# 204',
  ].join('\n');
  assert.equal(shellExamples(block, 10), [
    { command: 'curl -s a \\\n     -d x', answer: ['{"ok":true}'], line: 11 },
    { command: 'H=1', answer: [], line: 16 },
    { command: 'curl b', answer: ['204'], line: 17 },
  ]);
});

parsing.run();
