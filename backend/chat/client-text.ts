// Keeps text a client supplied (message content, names, tool results and arguments, tool schemas,
// template kwargs) from ever becoming control tokens. Before the chat template runs, every
// control-token text inside a client string (`<|im_start|>`, `</s>`…) is swapped for a sentinel
// the template cannot mistake for anything; after it ran, the rendered text is cut at the
// sentinels into segments, the client's spans restored and marked plain. The engine then parses
// special tokens in the template's segments only (tokenizeSegments), so a pasted file cannot
// close the user turn and open a fake system or assistant turn, and the same message always
// gives the same tokens.
//
// Sentinels are Unicode noncharacters (U+FDD0-U+FDEF, "for internal use"), which no template
// transform (trim, upper, split on ASCII, tojson) changes; a client's own noncharacters are
// protected spans too, so they cannot forge one. Also protected: a client string's end that starts
// a control token's text and its start that ends one, so no token forms across the boundary with
// the template's text.
import type { PromptSegment } from '../../native/lib/addon.js';

/** A prompt segment, or where an image goes (its index in the request's images; text ''). */
export type ChatSegment = PromptSegment & { image?: number };

const OPEN = 0xfdd0;
const CLOSE = 0xfdd1;
const DIGIT0 = 0xfdd2;
const BASE = 30; // U+FDD2-U+FDEF
const isNonchar = (c: number): boolean => c >= OPEN && c <= 0xfdef;

function sentinel(index: number): string {
  let digits = '';
  do { digits = String.fromCharCode(DIGIT0 + (index % BASE)) + digits; index = Math.floor(index / BASE); } while (index > 0);
  return String.fromCharCode(OPEN) + digits + String.fromCharCode(CLOSE);
}

/** What `tojson(ensure_ascii=True)` makes of a string's inside: JSON-escaped, non-ASCII as \uXXXX. */
function asciiJson(s: string): string {
  return JSON.stringify(s).slice(1, -1).replace(/[\x7f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One rendering's protected spans: protect client values going in, cut the rendered text coming out. */
export class ProtectedRender {
  private readonly spans: string[] = [];
  /** Span index -> image index: the spans that mark where an image goes (image()). */
  private readonly images = new Map<number, number>();

  constructor(private readonly guard: ClientTextGuard) {}

  /** A deep copy of a JSON-like value with every string (and object key) protected. */
  value<T>(v: T): T {
    return this.copy(v) as T;
  }

  /** One client string with its control-token texts (and noncharacters) replaced by sentinels. */
  text(s: string): string {
    const spans = this.guard.spansIn(s);
    if (spans.length === 0) return s;
    let out = '';
    let at = 0;
    for (const [start, end] of spans) {
      out += s.slice(at, start) + sentinel(this.spans.length);
      this.spans.push(s.slice(start, end));
      at = end;
    }
    return out + s.slice(at);
  }

  /** A marker for image `index` (a sentinel like a protected span's): segments() yields it as {image}. */
  image(index: number): string {
    this.images.set(this.spans.length, index);
    this.spans.push('');
    return sentinel(this.spans.length - 1);
  }

  /**
   * The rendered prompt as segments: the template's text, the client's protected spans as plain,
   * and where an image's marker was, a segment {text: '', image} of that image.
   */
  segments(rendered: string): ChatSegment[] {
    const out: ChatSegment[] = [];
    let text = '';
    const flush = (): void => { if (text) { out.push({ text }); text = ''; } };
    const re = /\ufdd0([\ufdd2-\ufdef]*?)\ufdd1|\\ufdd0((?:\\ufd(?:d[2-9a-f]|e[0-9a-f]))*)\\ufdd1|[\ufdd0-\ufdef]/gi;
    let at = 0;
    for (const m of rendered.matchAll(re)) {
      text += rendered.slice(at, m.index);
      at = m.index + m[0].length;
      const raw = m[1] ?? null;
      const escaped = m[2] ?? null;
      const index = raw !== null ? decode([...raw].map((c) => c.charCodeAt(0)))
        : escaped !== null ? decode(escaped.split(/\\u/i).filter(Boolean).map((h) => parseInt(h, 16))) : null;
      const span = index !== null ? this.spans[index] : undefined;
      // A stray noncharacter (a template cut a sentinel apart) is dropped: it was never the client's.
      if (span === undefined) continue;
      flush();
      const image = index !== null ? this.images.get(index) : undefined;
      if (image !== undefined) { out.push({ text: '', image }); continue; }
      out.push({ text: escaped !== null ? asciiJson(span) : span, plain: true });
    }
    text += rendered.slice(at);
    flush();
    return out;
  }

  private copy(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.copy(x));
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[this.text(k)] = this.copy(x);
      return out;
    }
    return v;
  }
}

function decode(digits: number[]): number | null {
  if (digits.length === 0 || digits.some((d) => d < DIGIT0 || d > 0xfdef)) return null;
  return digits.reduce((n, d) => n * BASE + (d - DIGIT0), 0);
}

/** The vocabulary's control-token texts, indexed for finding them inside client strings. */
export class ClientTextGuard {
  /** First UTF-16 unit -> texts starting with it, longest first. */
  private readonly byFirst = new Map<string, string[]>();
  /** Proper prefixes and suffixes of the texts (for the string-boundary rule). */
  private readonly prefixes = new Set<string>();
  private readonly suffixes = new Set<string>();
  private readonly longest: number;

  constructor(controlTexts: readonly string[]) {
    const texts = [...new Set(controlTexts.filter((t) => t.length > 0))].sort((a, b) => b.length - a.length);
    for (const t of texts) {
      const list = this.byFirst.get(t[0]!) ?? [];
      list.push(t);
      this.byFirst.set(t[0]!, list);
      for (let i = 1; i < t.length; i++) { this.prefixes.add(t.slice(0, i)); this.suffixes.add(t.slice(i)); }
    }
    this.longest = texts[0]?.length ?? 0;
  }

  /** A protection for one rendering. */
  begin(): ProtectedRender { return new ProtectedRender(this); }

  /** [start, end) spans of `s` to protect, in order, not overlapping. */
  spansIn(s: string): Array<[number, number]> {
    const spans: Array<[number, number]> = [];
    if (this.longest === 0 && !/[\ufdd0-\ufdef]/.test(s)) return spans;
    // The start: the longest prefix that ends a control text (it could join the template's text before it).
    let i = this.edge(s, 'start');
    if (i > 0) spans.push([0, i]);
    // The end: the longest suffix that starts one.
    const tail = s.length - this.edge(s, 'end');
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (isNonchar(c)) { spans.push([i, i + 1]); i++; continue; }
      const found = this.byFirst.get(s[i]!)?.find((t) => s.startsWith(t, i));
      if (found) { spans.push([i, i + found.length]); i += found.length; continue; }
      i++;
    }
    if (tail < s.length) {
      // Merge with a span the tail overlaps; otherwise protect the tail on its own.
      const last = spans.at(-1);
      if (last && last[1] > tail) last[1] = Math.max(last[1], s.length);
      else spans.push([tail, s.length]);
    }
    return spans;
  }

  /** A control-token text in `s` starts before `at` and ends after it (a cut there would split the token). */
  spans(s: string, at: number): boolean {
    for (let i = Math.max(0, at - this.longest + 1); i < at; i++) {
      if (this.byFirst.get(s[i]!)?.some((t) => i + t.length > at && s.startsWith(t, i))) return true;
    }
    return false;
  }

  /** Length of the longest proper prefix of `s` that is a suffix of a text ('start'), or suffix that is a prefix ('end'). */
  private edge(s: string, side: 'start' | 'end'): number {
    const set = side === 'start' ? this.suffixes : this.prefixes;
    for (let n = Math.min(this.longest - 1, s.length); n > 0; n--) {
      if (set.has(side === 'start' ? s.slice(0, n) : s.slice(s.length - n))) return n;
    }
    return 0;
  }
}
