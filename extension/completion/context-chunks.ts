// Extra context for infill (input_extra): short chunks of the files the user recently edited or
// has visible, around the lines that matter (edits, cursors), most recent first, within a budget;
// and, with strata.inlineCompletion.codebaseContext, the codebase index's best chunks for the
// identifiers just before the cursor (full-text search only: no request to the server).

export interface ChunkSource {
  filename: string;
  /** Whole file text. */
  text: string;
  /** Lines worth showing, most important first (edit positions, visible cursor). */
  focusLines: number[];
  /** Higher = more recent; sources are visited in descending order. */
  lastUsed: number;
}

export interface ChunkOptions {
  chunkLines: number;
  maxChunks: number;
  maxChars: number;
  /** The region the infill window already sends (same file): chunks must not repeat it. */
  exclude?: { filename: string; fromLine: number; toLine: number };
}

export interface Chunk { filename: string; text: string }

export function pickChunks(sources: readonly ChunkSource[], opts: ChunkOptions): Chunk[] {
  const out: Chunk[] = [];
  const seen = new Set<string>();
  let chars = 0;
  const half = Math.floor(opts.chunkLines / 2);
  for (const src of [...sources].sort((a, b) => b.lastUsed - a.lastUsed)) {
    const lines = src.text.split('\n');
    const taken: Array<[number, number]> = [];
    for (const focus of src.focusLines) {
      if (out.length >= opts.maxChunks) return out;
      let from = Math.max(0, Math.min(focus, lines.length - 1) - half);
      const to = Math.min(lines.length - 1, from + opts.chunkLines - 1);
      from = Math.max(0, to - opts.chunkLines + 1);
      if (taken.some(([a, b]) => from <= b && to >= a)) continue;
      const ex = opts.exclude;
      if (ex && ex.filename === src.filename && from <= ex.toLine && to >= ex.fromLine) continue;
      const text = lines.slice(from, to + 1).join('\n');
      const key = text.trim();
      if (!key || seen.has(key)) continue;
      if (chars + text.length > opts.maxChars) continue;
      taken.push([from, to]);
      seen.add(key);
      chars += text.length;
      out.push({ filename: src.filename, text });
    }
  }
  return out;
}

/** Remembers where the user edited recently (per file, newest first), within small limits. */
export class RecentEdits {
  private files = new Map<string, { lines: number[]; at: number }>();
  private clock = 0;

  constructor(private readonly maxFiles = 8, private readonly linesPerFile = 4) {}

  record(filename: string, line: number): void {
    const cur = this.files.get(filename) ?? { lines: [], at: 0 };
    // An edit near an already remembered line moves it instead of adding another chunk.
    const lines = [line, ...cur.lines.filter((l) => Math.abs(l - line) > 8)].slice(0, this.linesPerFile);
    this.files.delete(filename);
    this.files.set(filename, { lines, at: ++this.clock });
    while (this.files.size > this.maxFiles) this.files.delete(this.files.keys().next().value!);
  }

  forget(filename: string): void {
    this.files.delete(filename);
  }

  /** Files with their edit lines, newest first. */
  list(): Array<{ filename: string; lines: number[]; at: number }> {
    return [...this.files].map(([filename, v]) => ({ filename, ...v })).sort((a, b) => b.at - a.at);
  }
}

/** Words too common in code to say what the cursor is about. */
const COMMON = new Set(['const', 'let', 'var', 'function', 'return', 'if', 'else', 'for', 'while', 'new', 'this', 'self', 'true', 'false',
  'null', 'undefined', 'none', 'int', 'void', 'char', 'float', 'double', 'bool', 'auto', 'static', 'struct', 'class', 'def', 'import',
  'from', 'export', 'public', 'private', 'async', 'await', 'string', 'number', 'the', 'and', 'std', 'size_t', 'unsigned', 'include']);

/**
 * The index query for the code before the cursor: the distinct identifiers of its last lines,
 * nearest the cursor first (the call being typed, the names it uses), common keywords left out.
 */
export function codebaseQuery(prefix: string, opts: { lines: number; maxTerms: number } = { lines: 12, maxTerms: 12 }): string {
  const tail = prefix.split('\n').slice(-opts.lines).join('\n');
  const ids = [...tail.matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)].map((m) => m[0]);
  const out: string[] = [];
  for (let i = ids.length - 1; i >= 0 && out.length < opts.maxTerms; i--) {
    const id = ids[i]!;
    if (!COMMON.has(id.toLowerCase()) && !out.includes(id)) out.push(id);
  }
  return out.join(' ');
}

export interface IndexHit { path: string; startLine: number; endLine: number; text: string }

/**
 * Index hits (best first) as infill chunks beside the ones already picked: none overlapping the
 * window the infill sends, none whose text is already there, within the same budget (the
 * already picked chunks count towards maxChunks and maxChars). Lines are 1-based in hits.
 */
export function indexChunks(hits: readonly IndexHit[], picked: readonly Chunk[], opts: ChunkOptions): Chunk[] {
  const out: Chunk[] = [];
  let chars = picked.reduce((n, c) => n + c.text.length, 0);
  for (const h of hits) {
    if (picked.length + out.length >= opts.maxChunks) break;
    const ex = opts.exclude;
    if (ex && ex.filename === h.path && h.startLine - 1 <= ex.toLine && h.endLine - 1 >= ex.fromLine) continue;
    const text = h.text.trim();
    const repeats = (c: Chunk): boolean => { const t = c.text.trim(); return t.includes(text) || (t.length > 0 && text.includes(t)); };
    if (!text || [...picked, ...out].some(repeats)) continue;
    if (chars + h.text.length > opts.maxChars) continue;
    chars += h.text.length;
    out.push({ filename: h.path, text: h.text });
  }
  return out;
}
