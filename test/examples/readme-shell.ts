// The shell examples of a README section, as a test runs them. In a fenced `sh` block, a command is
// a line that is not a comment (continued by a trailing backslash); the comment lines right after
// it, with no blank line between, are the answer the README shows for it. A command shown with no
// answer must print nothing. Comment lines after a blank line explain what follows; they are not
// answers. In an answer, `…` stands for any text on its line, and a line that is only `…` for any
// number of lines (headers that change, a long document).

export interface ShellExample {
  /** The command as the README shows it, continuation lines included. */
  readonly command: string;
  /** The answer lines as shown (without `# `). */
  readonly answer: readonly string[];
  /** The README line the command starts on (1-based), for messages. */
  readonly line: number;
}

/** The first fenced block of language `lang` under the heading `heading` (any level), with its first line number. */
export function fencedBlock(markdown: string, heading: string, lang = 'sh'): { text: string; firstLine: number } {
  const lines = markdown.split('\n');
  const headingAt = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '').trim() === heading);
  if (headingAt < 0) throw new Error(`no heading "${heading}"`);
  const open = lines.findIndex((line, index) => index > headingAt && line.trim() === `\`\`\`${lang}`);
  const nextHeading = lines.findIndex((line, index) => index > headingAt && /^#+ /.test(line));
  if (open < 0 || (nextHeading >= 0 && open > nextHeading))
    throw new Error(`no \`\`\`${lang} block under "${heading}"`);
  const close = lines.findIndex((line, index) => index > open && line.trim() === '```');
  return { text: lines.slice(open + 1, close).join('\n'), firstLine: open + 2 };
}

export function shellExamples(block: string, firstLine = 1): ShellExample[] {
  const examples: ShellExample[] = [];
  const lines = block.split('\n');
  let index = 0;
  while (index < lines.length) {
    const text = lines[index] ?? '';
    if (text.trim() === '' || text.trimStart().startsWith('#')) {
      index += 1;
      continue;
    }
    const line = firstLine + index;
    const command = [text];
    index += 1;
    while (command.at(-1)?.endsWith('\\') && index < lines.length) {
      command.push(lines[index] ?? '');
      index += 1;
    }
    const answer: string[] = [];
    while (lines[index]?.startsWith('#')) {
      answer.push((lines[index] ?? '').replace(/^# ?/, ''));
      index += 1;
    }
    examples.push({ command: command.join('\n'), answer, line });
  }
  return examples;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `output` (trailing newlines and CRs ignored) is the answer shown, with `…` as described above. */
export function answerMatches(answer: readonly string[], output: string): boolean {
  const lines = output.replace(/\r/g, '').replace(/\n+$/, '');
  if (answer.length === 0) return lines === '';
  const pattern = answer
    .map((line) => (line === '…' ? '(?:[^\\n]*\\n)*?' : `${escape(line).replace(/…/g, '[^\\n]*')}\\n`))
    .join('');
  return new RegExp(`^${pattern}$`).test(`${lines}\n`);
}

/**
 * One bash script that runs every example in order (so variables carry over, as in a terminal) and
 * prints a marker line before each, so each answer can be cut out of the output.
 */
export function scriptOf(examples: readonly ShellExample[], rewrite: (command: string) => string): string {
  return examples
    .map((example, index) => `printf '\\n${MARKER}%d@@\\n' ${index}\n${rewrite(example.command)}`)
    .join('\n');
}

const MARKER = '@@readme example ';

/** The output of each example, by index, from the output of `scriptOf`. */
export function answersOf(output: string): Map<number, string> {
  const answers = new Map<number, string>();
  const parts = output.split(new RegExp(`\\n${escape(MARKER)}(\\d+)@@\\n`));
  for (let index = 1; index + 1 < parts.length; index += 2) answers.set(Number(parts[index]), parts[index + 1] ?? '');
  return answers;
}
