// Markdown of a chat answer -> a small tree of allowed elements (pure: no DOM, unit-tested).
// markdown-it parses (raw HTML off, so a model's or a file's tags stay text); this file keeps only
// the elements and attributes the panel draws, and links only to http(s) and mailto. render.ts
// turns the tree into DOM nodes with textContent, never innerHTML.
import MarkdownIt, { type Token } from 'markdown-it';
import { highlightCode } from './highlight.js';
import type { MdNode, MdTag } from './md-node.js';

// linkify: bare URLs become links too (they are checked like any other link below).
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

const SAFE_LINK = /^(https?:|mailto:)/i;

const BLOCK_TAGS: Record<string, MdTag> = {
  paragraph: 'p', bullet_list: 'ul', ordered_list: 'ol', list_item: 'li', blockquote: 'blockquote',
  table: 'table', thead: 'thead', tbody: 'tbody', tr: 'tr', th: 'th', td: 'td',
  strong: 'strong', em: 'em', s: 's',
};

const attr = (tok: Token, name: string): string | null => {
  const v = tok.attrGet(name);
  return v === null ? null : String(v);
};

/** The element a `*_open` token opens, with the attributes we keep. */
function openEl(tok: Token): MdNode & { t: 'el' } | null {
  const kind = tok.type.slice(0, -'_open'.length);
  if (kind === 'heading') return { t: 'el', tag: tok.tag as MdTag, children: [] };
  if (kind === 'link') {
    const href = attr(tok, 'href') ?? '';
    // An unsafe link keeps its text but is no link (a span).
    return SAFE_LINK.test(href) ? { t: 'el', tag: 'a', attrs: { href, title: href }, children: [] } : { t: 'el', tag: 'span', children: [] };
  }
  const tag = BLOCK_TAGS[kind];
  if (!tag) return { t: 'el', tag: 'span', children: [] };
  const attrs: Record<string, string> = {};
  if (tag === 'ol') {
    const start = attr(tok, 'start');
    if (start) attrs.start = start;
  }
  // Table alignment arrives as style="text-align:…"; the CSP forbids style attributes, so a class.
  const align = /text-align:\s*(left|center|right)/.exec(attr(tok, 'style') ?? '')?.[1];
  if (align) attrs.class = `align-${align}`;
  return { t: 'el', tag, ...(Object.keys(attrs).length ? { attrs } : {}), children: [] };
}

function build(tokens: readonly Token[]): MdNode[] {
  const root: MdNode[] = [];
  const stack: Array<MdNode & { t: 'el' }> = [];
  const add = (n: MdNode): void => {
    const top = stack[stack.length - 1];
    (top ? top.children : root).push(n);
  };
  for (const tok of tokens) {
    // Paragraphs of tight lists are hidden: their text goes straight into the item.
    if (tok.hidden && tok.nesting !== 0) continue;
    if (tok.nesting === 1) {
      const el = openEl(tok);
      if (el) {
        add(el);
        stack.push(el);
      }
      continue;
    }
    if (tok.nesting === -1) {
      stack.pop();
      continue;
    }
    switch (tok.type) {
      case 'inline': for (const n of build(tok.children ?? [])) add(n); break;
      case 'text': case 'html_inline': case 'html_block': add({ t: 'text', text: tok.content }); break;
      case 'softbreak': add({ t: 'text', text: '\n' }); break;
      case 'hardbreak': add({ t: 'el', tag: 'br', children: [] }); break;
      case 'hr': add({ t: 'el', tag: 'hr', children: [] }); break;
      case 'code_inline': add({ t: 'el', tag: 'code', children: [{ t: 'text', text: tok.content }] }); break;
      case 'fence': case 'code_block': {
        const lang = tok.info.trim().split(/\s+/)[0] || null;
        const text = tok.content.replace(/\n$/, '');
        add({ t: 'code', lang, text, code: highlightCode(text, lang) });
        break;
      }
      case 'image': {
        // No remote content in the panel: an image shows as its description and address.
        const src = attr(tok, 'src') ?? '';
        add({ t: 'text', text: `[image: ${tok.content || 'no description'}${src ? ` ${src}` : ''}]` });
        break;
      }
      default:
        if (tok.content) add({ t: 'text', text: tok.content });
    }
  }
  return root;
}

/** Parses a (possibly half-streamed) markdown answer into the panel's element tree. */
export function parseMarkdown(text: string): MdNode[] {
  return build(md.parse(text, {}));
}
