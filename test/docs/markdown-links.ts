// What a link between the README and docs/ points at: GitHub's anchors for the headings of a
// Markdown file, and the file's relative links. Code (fenced blocks, inline spans) holds no links.

export interface MarkdownLink {
  /** As written: `docs/kafka.md#failure-modes`, `#backups`, `../README.md`. */
  readonly target: string;
  /** 1-based, for messages. */
  readonly line: number;
}

/** GitHub's anchor for a heading: lower case; punctuation other than `-` and `_` dropped (inline code marks too); spaces to `-`. */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The lines of `markdown` outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (fence !== undefined && marker !== undefined && text.trim().startsWith(fence)) fence = undefined;
    else if (fence === undefined) lines.push({ text, line: index + 1 });
  });
  return lines;
}

/** The anchors of the headings of `markdown`; a repeated one gets `-1`, `-2`… as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The links of `markdown` that are not absolute URLs (`https:`, `mailto:`), outside code. */
export function relativeLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(/`+[^`]*`+/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] ?? '';
      if (!/^[a-z][a-z\d+.-]*:/i.test(target)) links.push({ target, line });
    }
  }
  return links;
}
