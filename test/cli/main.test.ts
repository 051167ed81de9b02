// The `reports` dispatcher: the overview, unknown commands, and for every subcommand --help and a
// bad flag, with the exit codes scripts rely on (0 done, 1 failed, 2 usage).
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const COMMANDS = ['serve', 'events', 'replay', 'verify', 'snapshot', 'migrate', 'schema'] as const;

const dispatcher = suite('reports');

dispatcher('with no command exits 2 and prints the overview naming every command', async () => {
  const { code, stdout } = await reports([]);
  assert.is(code, 2);
  assert.match(stdout, /^usage: reports <command>/);
  for (const name of COMMANDS) assert.match(stdout, new RegExp(`^  ${name} `, 'm'));
});

dispatcher('--help prints the overview and exits 0', async () => {
  const { code, stdout } = await reports(['--help']);
  assert.is(code, 0);
  assert.match(stdout, /^usage: reports <command>/);
});

dispatcher('--help names the AsyncAPI document and migrate --to-topic, not only the first of each', async () => {
  const { stdout } = await reports(['--help']);
  assert.match(stdout, /^  schema .*AsyncAPI document/m);
  assert.match(stdout, /^  migrate .*--to-kafka.*--to-topic NAME/m);
});

dispatcher('an option value that starts with a dash says how to write it, not that it is "ambiguous"', async () => {
  const { code, stderr } = await reports(['events', '--from', '-1']);
  assert.is(code, 2);
  assert.is(
    stderr.split('\n')[0],
    'reports events: --from needs a value; to give one that starts with "-", write --from=-1',
  );
  assert.match(stderr, /^usage: reports events /m);
  const written = await reports(['events', '--from=-1']);
  assert.is(written.code, 2);
  assert.is(written.stderr.split('\n')[0], 'reports events: --from must be N or P:O[,P:O...], got "-1"');
});

dispatcher(
  "an unknown option is named in one short line, without parseArgs' advice and its unbalanced quotes",
  async () => {
    const { code, stderr } = await reports(['replay', '--bogus']);
    assert.is(code, 2);
    assert.is(stderr, `reports replay: unknown option --bogus\nusage: reports replay [--to POS] [--json]\n`);
  },
);

dispatcher('an unknown command exits 2 naming it, with a usage line on stderr', async () => {
  const { code, stdout, stderr } = await reports(['frobnicate']);
  assert.is(code, 2);
  assert.is(stdout, '');
  assert.match(stderr, 'unknown command "frobnicate"');
  assert.match(stderr, /^usage: reports <command>/m);
});

for (const name of COMMANDS) {
  dispatcher(`${name} --help exits 0 and prints its usage and description`, async () => {
    const { code, stdout, stderr } = await reports([name, '--help']);
    assert.is(code, 0);
    assert.is(stderr, '');
    assert.match(stdout, new RegExp(`^usage: reports ${name}\\b`));
    assert.ok(stdout.split('\n').length > 3, 'a description follows the usage line');
  });

  dispatcher(`${name} with an unknown flag exits 2 with its usage line on stderr`, async () => {
    const { code, stdout, stderr } = await reports([name, '--no-such-flag']);
    assert.is(code, 2);
    assert.is(stdout, '');
    assert.match(stderr, `reports ${name}: `);
    assert.match(stderr, '--no-such-flag');
    assert.match(stderr, new RegExp(`^usage: reports ${name}\\b`, 'm'));
  });
}

dispatcher('a bad setting in the environment exits 2 naming the variable', async () => {
  const { code, stderr } = await reports(['replay'], { env: { KAFKA_BROKERS: 'no port here' } });
  assert.is(code, 2);
  assert.match(stderr, 'reports replay: bad setting KAFKA_BROKERS');
});

dispatcher('a command that fails exits 1 with the reason on stderr', async () => {
  const dir = await tempDir('reports-cli-empty-');
  try {
    const { code, stdout, stderr } = await reports(['replay'], { env: { REPORTS_DATA_DIR: dir } });
    assert.is(code, 1);
    assert.is(stdout, '');
    assert.match(stderr, /^reports replay: no event log at /);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

dispatcher.run();
