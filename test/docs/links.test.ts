// The README and the pages of docs/ link to each other by relative paths and heading anchors; a
// heading renamed or a section moved must not leave a link pointing nowhere. Anchors follow GitHub's
// rules, where the pages are read.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { githubSlug, headingAnchors, relativeLinks } from './markdown-links.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const slug = suite('githubSlug');
slug('lowercases a heading and turns its spaces into hyphens', () => {
  assert.is(githubSlug('Several instances'), 'several-instances');
});
slug('drops punctuation and inline code marks but keeps hyphens and underscores', () => {
  assert.is(githubSlug('The `reports` command'), 'the-reports-command');
  assert.is(githubSlug('On a three-broker cluster (`make chaos`)'), 'on-a-three-broker-cluster-make-chaos');
  assert.is(githubSlug('The topic contract, for downstream consumers'), 'the-topic-contract-for-downstream-consumers');
  assert.is(githubSlug('REPORTS_DATA_DIR: what it holds'), 'reports_data_dir-what-it-holds');
});
slug.run();

const anchors = suite('headingAnchors');
anchors('numbers a repeated heading as GitHub does', () => {
  assert.equal(
    [...headingAnchors('# Failure modes\n## Kafka\n## Kafka\n### Kafka\n')],
    ['failure-modes', 'kafka', 'kafka-1', 'kafka-2'],
  );
});
anchors('ignores lines starting with # inside fenced code', () => {
  assert.equal([...headingAnchors('## Backups\n```sh\n# 1. copy the log\n```\n')], ['backups']);
});
anchors.run();

const links = suite('relativeLinks');
links('finds relative links with their line, anchors included', () => {
  assert.equal(relativeLinks('see [Backups](#backups)\nand [Kafka](docs/kafka.md#failure-modes).'), [
    { target: '#backups', line: 1 },
    { target: 'docs/kafka.md#failure-modes', line: 2 },
  ]);
});
links('skips absolute URLs and links inside code', () => {
  assert.equal(relativeLinks('[site](https://example.com) `[x](nowhere.md)`\n```md\n[y](gone.md)\n```\n'), []);
});
links.run();

/** Why `target`, linked from `page`, points nowhere; undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2);
  const file = path === '' ? join(root, page) : join(dirname(join(root, page)), decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${relative(root, file)}`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md')) return `an anchor into ${relative(root, file)}, which is not Markdown`;
  return headingAnchors(readFileSync(file, 'utf8')).has(anchor)
    ? undefined
    : `no heading with the anchor #${anchor} in ${relative(root, file)}`;
}

const docs = suite('README.md and docs/');
for (const page of pages) {
  docs(`every relative link of ${page} names a file that exists and, after #, one of its headings`, () => {
    const broken = relativeLinks(readFileSync(join(root, page), 'utf8')).flatMap(({ target, line }) => {
      const reason = brokenLink(page, target);
      return reason === undefined ? [] : [`${page}:${line} ${target}: ${reason}`];
    });
    assert.equal(broken, []);
  });
}
docs('the README links every page of docs/', () => {
  const linked = new Set(
    relativeLinks(readFileSync(join(root, 'README.md'), 'utf8')).map(({ target }) => target.split('#')[0]),
  );
  assert.equal(
    pages.filter((page) => page !== 'README.md' && !linked.has(page)),
    [],
  );
});
docs.run();
