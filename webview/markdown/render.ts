// The element tree of parse.ts as DOM nodes (createElement + textContent only), with a toolbar on
// every code block: Copy, Insert at cursor, Apply to file.
import { h } from '../dom.js';
import { iconButton } from '../icons.js';
import { parseMarkdown } from './parse.js';
import type { MdNode } from './md-node.js';

export interface CodeActions {
  copy(code: string): void;
  insert(code: string): void;
  apply(code: string, lang: string | null): void;
}

function toDom(n: MdNode, actions: CodeActions | null): Node {
  if (n.t === 'text') return document.createTextNode(n.text);
  if (n.t === 'code') return codeBlock(n, actions);
  const el = document.createElement(n.tag);
  for (const [k, v] of Object.entries(n.attrs ?? {})) el.setAttribute(k, v);
  for (const c of n.children) el.append(toDom(c, actions));
  return el;
}

function codeBlock(n: MdNode & { t: 'code' }, actions: CodeActions | null): HTMLElement {
  const code = h('code', n.lang ? { class: `hljs language-${n.lang.replace(/[^\w-]/g, '')}` } : { class: 'hljs' });
  for (const c of n.code) code.append(toDom(c, null));
  const bar = actions ? h('div', { class: 'code-actions', role: 'toolbar', 'aria-label': `Code block${n.lang ? ` (${n.lang})` : ''}` },
    n.lang ? h('span', { class: 'code-lang muted' }, n.lang) : null,
    iconButton('copy', 'Copy code', () => actions.copy(n.text)),
    iconButton('insert', 'Insert code at cursor', () => actions.insert(n.text)),
    iconButton('git-pull-request-go-to-changes', 'Apply code to file', () => actions.apply(n.text, n.lang))) : null;
  return h('div', { class: 'code-block' }, bar, h('pre', {}, code));
}

/** Markdown text as DOM nodes; code blocks get actions when given (answers), none otherwise. */
export function renderMarkdown(text: string, actions: CodeActions | null): Node[] {
  return parseMarkdown(text).map((n) => toDom(n, actions));
}
