// The tree a chat answer's markdown becomes (parse.ts builds it, highlight.ts fills code blocks,
// render.ts draws it): only the elements and attributes the panel shows.
export type MdTag =
  | 'p' | 'h1' | 'h2' | 'h3' | 'h4' | 'h5' | 'h6' | 'ul' | 'ol' | 'li' | 'blockquote' | 'hr' | 'br'
  | 'strong' | 'em' | 's' | 'code' | 'a' | 'span' | 'table' | 'thead' | 'tbody' | 'tr' | 'th' | 'td';

export type MdNode =
  | { t: 'text'; text: string }
  | { t: 'el'; tag: MdTag; attrs?: Record<string, string>; children: MdNode[] }
  /** A fenced or indented code block; `code` is the highlighted content, `text` the raw code. */
  | { t: 'code'; lang: string | null; text: string; code: MdNode[] };
