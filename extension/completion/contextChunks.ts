// Extra context for infill (input_extra): short chunks of the files the user recently edited or
// has visible, around the lines that matter (edits, cursors), most recent first, within a budget.

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
