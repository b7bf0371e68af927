import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../../webview/markdown/parse.js';
import type { MdNode } from '../../webview/markdown/md-node.js';

/** The code blocks in the tree, in order. */
function codeBlocks(nodes: readonly MdNode[]): Array<{ lang: string | null; text: string }> {
  return nodes.flatMap((n) => (n.t === 'code' ? [{ lang: n.lang, text: n.text }] : n.t === 'el' ? codeBlocks(n.children) : []));
}

/** The tree as compact text: <tag attrs>children</tag>, code blocks as [code:lang|text]. */
function show(nodes: readonly MdNode[]): string {
  return nodes.map((n) => {
    if (n.t === 'text') return n.text;
    if (n.t === 'code') return `[code:${n.lang ?? ''}|${n.text}]`;
    const attrs = Object.entries(n.attrs ?? {}).map(([k, v]) => ` ${k}="${v}"`).join('');
    return `<${n.tag}${attrs}>${show(n.children)}</${n.tag}>`;
  }).join('');
}

describe('chat answers as markdown', () => {
  it('renders emphasis, headings, lists, inline code and links', () => {
    expect(show(parseMarkdown('# Title\n\nSome **bold**, *em* and `code`.\n\n- one\n- two\n\n1. first\n2. second'))).toBe(
      '<h1>Title</h1><p>Some <strong>bold</strong>, <em>em</em> and <code>code</code>.</p>'
      + '<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>');
    expect(show(parseMarkdown('See [docs](https://example.com/a) or https://x.org'))).toBe(
      '<p>See <a href="https://example.com/a" title="https://example.com/a">docs</a> or <a href="https://x.org" title="https://x.org">https://x.org</a></p>');
  });

  it('keeps raw HTML as text and drops unsafe links and remote images', () => {
    expect(show(parseMarkdown('<img src=x onerror=alert(1)> <b>hi</b>'))).toBe('<p><img src=x onerror=alert(1)> <b>hi</b></p>');
    expect(show(parseMarkdown('[click](javascript:alert(1)) [f](file:///etc/passwd) [v](vscode:extension/x)'))).toBe(
      '<p>[click](javascript:alert(1)) [f](file:///etc/passwd) <span>v</span></p>');
    expect(show(parseMarkdown('![a cat](https://cats.example/cat.png)'))).toBe('<p>[image: a cat https://cats.example/cat.png]</p>');
  });

  it('turns fenced code into highlighted blocks that keep the raw text', () => {
    const nodes = parseMarkdown('Here:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nand\n\n```\nplain\n```');
    expect(codeBlocks(nodes)).toEqual([{ lang: 'python', text: 'def add(a, b):\n    return a + b' }, { lang: null, text: 'plain' }]);
    const block = nodes.find((n) => n.t === 'code')!;
    const spans = block.t === 'code' ? block.code.filter((n) => n.t === 'el') : [];
    expect(spans.map((s) => (s.t === 'el' ? s.attrs?.class : ''))).toContain('hljs-keyword');
    // Highlighting never changes the text.
    const text = (ns: readonly MdNode[]): string => ns.map((n) => (n.t === 'text' ? n.text : n.t === 'el' ? text(n.children) : n.text)).join('');
    expect(block.t === 'code' && text(block.code)).toBe('def add(a, b):\n    return a + b');
  });

  it('renders a half-streamed answer: an unclosed fence is a code block so far', () => {
    expect(codeBlocks(parseMarkdown('Try:\n```js\nconst x = 1;\nconst y'))).toEqual([{ lang: 'js', text: 'const x = 1;\nconst y' }]);
  });

  it('unknown languages stay plain text, tables keep their alignment as a class', () => {
    const nodes = parseMarkdown('```nosuchlang\na < b\n```');
    expect(nodes[0]).toEqual({ t: 'code', lang: 'nosuchlang', text: 'a < b', code: [{ t: 'text', text: 'a < b' }] });
    expect(show(parseMarkdown('| a | b |\n|:-|-:|\n| 1 | 2 |'))).toBe(
      '<table><thead><tr><th class="align-left">a</th><th class="align-right">b</th></tr></thead><tbody><tr><td class="align-left">1</td><td class="align-right">2</td></tr></tbody></table>');
  });
});
