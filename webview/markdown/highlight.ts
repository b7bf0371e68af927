// Syntax highlighting for code blocks: lowlight (highlight.js grammars, common languages) gives a
// syntax tree, not HTML, so the spans are built like every other node. The hljs-* classes are
// coloured from the VS Code theme in media/panel.css, so highlighting follows the theme.
import { common, createLowlight } from 'lowlight';
import type { MdNode } from './md-node.js';

const lowlight = createLowlight(common);

/** Longer blocks stay plain: highlighting them on every streamed token would stall the panel. */
const MAX_HIGHLIGHT_CHARS = 20_000;

interface HastText { type: 'text'; value: string }
interface HastElement { type: 'element'; properties?: { className?: unknown }; children: HastChild[] }
type HastChild = HastText | HastElement | { type: string };

function convert(children: readonly HastChild[]): MdNode[] {
  const out: MdNode[] = [];
  for (const c of children) {
    if (c.type === 'text') out.push({ t: 'text', text: (c as HastText).value });
    else if (c.type === 'element') {
      const el = c as HastElement;
      const cls = Array.isArray(el.properties?.className)
        ? (el.properties.className as unknown[]).filter((x): x is string => typeof x === 'string' && /^hljs-[\w-]+$/.test(x)).join(' ')
        : '';
      out.push({ t: 'el', tag: 'span', ...(cls ? { attrs: { class: cls } } : {}), children: convert(el.children) });
    }
  }
  return out;
}

/** Highlighted code for a block in `lang` (a name or alias highlight.js knows), else plain text. */
export function highlightCode(text: string, lang: string | null): MdNode[] {
  const name = lang?.toLowerCase() ?? null;
  if (!name || text.length > MAX_HIGHLIGHT_CHARS || !lowlight.registered(name)) return [{ t: 'text', text }];
  try {
    return convert(lowlight.highlight(name, text).children as HastChild[]);
  } catch {
    return [{ t: 'text', text }];
  }
}
