// Every relative link in README.md, CONTRIBUTING.md and docs/*.md leads somewhere: the file exists
// and its #anchor is a heading there (GitHub's heading ids), so moving a section or renaming a
// heading fails here instead of leaving a dead link. Links outside the repository (http, mailto)
// are not followed.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const md = new MarkdownIt({ html: true });

interface Link { href: string; line: number }

/** The links of a Markdown text (not those inside code), with their line. */
function linksOf(text: string): Link[] {
  const links: Link[] = [];
  let line = 1; // table cells carry no line of their own: the row's (or the table's) is the last one seen
  for (const block of md.parse(text, {})) {
    if (block.map) line = block.map[0] + 1;
    for (const token of block.children ?? []) {
      const href = token.type === 'link_open' ? token.attrGet('href') : token.type === 'image' ? token.attrGet('src') : null;
      if (href !== null) links.push({ href: String(href), line });
    }
  }
  return links;
}

/** The anchors GitHub gives a Markdown text's headings (duplicates numbered, as GitHub does). */
function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const tokens = md.parse(text, {});
  const anchors = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[i + 1]!;
    // The heading's text as GitHub sees it: code spans keep their content, markup goes.
    const plain = (inline.children ?? []).filter((c) => c.type === 'text' || c.type === 'code_inline').map((c) => c.content).join('');
    anchors.add(slugger.slug(plain));
  });
  return anchors;
}

/** Each link that does not resolve, as `file:line href (why)`. */
function brokenLinks(file: string, text: string, readPage: (path: string) => string | null): string[] {
  const broken: string[] = [];
  for (const { href, line } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // http:, https:, mailto:
    const [pathPart, anchor] = href.split('#') as [string, string | undefined];
    const target = pathPart === '' ? file : join(dirname(file), decodeURIComponent(pathPart));
    const where = `${file}:${line} ${href}`;
    const body = readPage(target);
    if (body === null) {
      if (!existsSync(join(root, target))) broken.push(`${where} (no such file)`);
      else if (anchor) broken.push(`${where} (an anchor into something that is not a Markdown page)`);
      continue;
    }
    if (anchor !== undefined && !anchorsOf(body).has(anchor)) broken.push(`${where} (no heading with this anchor in ${target})`);
  }
  return broken;
}

function readPage(path: string): string | null {
  const abs = resolve(root, path);
  if (!abs.startsWith(root) || !existsSync(abs) || statSync(abs).isDirectory() || !abs.endsWith('.md')) return null;
  return readFileSync(abs, 'utf8');
}

const pages = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('docs links', () => {
  it('covers the README, CONTRIBUTING.md and every page in docs/', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/user-guide.md', 'docs/server.md', 'docs/security.md', 'docs/design.md', 'docs/benchmarks.md']));
  });

  for (const page of pages) {
    it(`${page}: every relative link and #anchor resolves`, () => {
      expect(brokenLinks(page, readFileSync(join(root, page), 'utf8'), readPage)).toEqual([]);
    });
  }

  it('the README links every page in docs/ and CONTRIBUTING.md', () => {
    const linked = new Set(linksOf(readFileSync(join(root, 'README.md'), 'utf8')).map((l) => l.href.split('#')[0]));
    for (const page of pages.filter((p) => p !== 'README.md')) expect(linked, page).toContain(page);
  });

  it('the VSIX ships the pages the README links, and vsce keeps the links relative (it refuses them without a repository URL)', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // npm run package runs scripts/package.mjs, which calls vsce once per platform.
    expect(pkg.scripts.package).toContain('scripts/package.mjs');
    expect(readFileSync(join(root, 'scripts', 'package.mjs'), 'utf8')).toContain("'--no-rewrite-relative-links'");
    const shipped = readFileSync(join(root, '.vscodeignore'), 'utf8').split('\n');
    expect(shipped).toEqual(expect.arrayContaining(['!README.md', '!CONTRIBUTING.md', '!docs/*.md']));
  });

  it('the page the extension opens for Troubleshooting has that section', () => {
    expect(anchorsOf(readFileSync(join(root, 'docs', 'user-guide.md'), 'utf8'))).toContain('troubleshooting');
  });

  it('finds what is broken: a missing file, a missing anchor, an anchor into another page', () => {
    const pagesHere: Record<string, string> = {
      'docs/a.md': '# Title\n\n## Two words `code` here\n\n## Two words `code` here\n',
    };
    const read = (p: string): string | null => pagesHere[relative('.', p)] ?? null;
    const text = [
      '[ok](a.md#title) [dup](a.md#two-words-code-here-1) [web](https://example.com/#x)',
      '[gone](missing.md) [bad](a.md#nope)',
      '`[in code](missing.md)`',
      '```\n[in a block](missing.md)\n```',
    ].join('\n\n');
    expect(brokenLinks('docs/a.md', text, read)).toEqual([
      'docs/a.md:3 missing.md (no such file)',
      'docs/a.md:3 a.md#nope (no heading with this anchor in docs/a.md)',
    ]);
    expect(brokenLinks('docs/a.md', '[self](#title) [self-bad](#other)', read)).toEqual(['docs/a.md:1 #other (no heading with this anchor in docs/a.md)']);
  });
});
