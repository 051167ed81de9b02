// parseCommand: every subcommand's arguments, with messages that name the option and say what to
// write instead of passing parseArgs' own on ("argument is ambiguous", quotes that do not pair up).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCommand, UsageError, type CommandSpec } from '../../src/cli/usage.js';

const spec: CommandSpec = {
  name: 'events',
  usage: 'reports events [--from POS] [--follow]',
  description: 'test',
  options: { from: { type: 'string' }, follow: { type: 'boolean' } },
};

function usageError(args: string[]): string {
  try {
    parseCommand(spec, args);
  } catch (error) {
    assert.instance(error, UsageError);
    assert.is((error as UsageError).usage, spec.usage);
    return (error as UsageError).message;
  }
  throw new assert.Assertion({
    message: `no usage error for ${args.join(' ')}`,
    operator: 'throws',
    actual: undefined,
    expects: UsageError,
  });
}

const parse = suite('parseCommand');

parse('reads string and boolean options, inline or separate, and --help', () => {
  assert.equal(parseCommand(spec, ['--from', '3', '--follow']), {
    values: { from: '3', follow: true },
    positionals: [],
    help: false,
  });
  assert.equal(parseCommand(spec, ['--from=-1']).values, { from: '-1' });
  assert.is(parseCommand(spec, ['-h']).help, true);
});

parse('says an option needs a value when the next argument starts with a dash, and how to give one', () => {
  assert.is(usageError(['--from', '-1']), '--from needs a value; to give one that starts with "-", write --from=-1');
  assert.is(
    usageError(['--from', '--follow']),
    '--from needs a value; to give one that starts with "-", write --from=--follow',
  );
});

parse('says an option needs a value when it is the last argument', () => {
  assert.is(usageError(['--follow', '--from']), '--from needs a value');
});

parse('names an unknown option in one line', () => {
  assert.is(usageError(['--bogus']), 'unknown option --bogus');
  assert.is(usageError(['-x']), 'unknown option -x');
});

parse('says a flag takes no value', () => {
  assert.is(usageError(['--follow=yes']), '--follow takes no value, got "yes"');
});

parse('refuses positionals the command does not take', () => {
  assert.is(usageError(['extra']), 'unexpected argument "extra"');
});

parse.run();
