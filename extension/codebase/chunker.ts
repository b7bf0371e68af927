// Splits a file's text into chunks of whole lines for the index. With a syntax tree (syntax.ts)
// chunks end where top-level declarations end, several small ones packed together and a large
// one split at its members, a comment kept with the declaration it documents; without one, fixed
// windows of lines that overlap, so text near a window's edge is whole in one of them. Pure.

export interface ChunkOptions {
  /** A chunk's text is at most this many characters, unless one line alone is longer (then it is cut). */
  maxChars: number;
  /** Window chunks: at most this many lines. */
  maxLines: number;
  /** Window chunks: lines a window repeats from the one before. */
  overlapLines: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { maxChars: 1200, maxLines: 40, overlapLines: 8 };

export interface Chunk {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
  kind: 'syntax' | 'window';
}

/** A node of a syntax tree as the chunker needs it: rows are 0-based and inclusive. */
export interface SyntaxNode {
  readonly type: string;
  readonly startRow: number;
  readonly endRow: number;
  readonly children: readonly SyntaxNode[];
}

/** A file's lines; a final newline ends the last line and starts no new one. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function lineChunk(lines: readonly string[], start: number, end: number, kind: Chunk['kind'], maxChars: number): Chunk {
  let text = lines.slice(start, end + 1).join('\n');
  // One line longer than a chunk (minified code, data): cut, so one input never exceeds the budget.
  if (text.length > maxChars) text = text.slice(0, maxChars);
  return { startLine: start + 1, endLine: end + 1, text, kind };
}

/** True when the lines hold something besides whitespace. */
function hasText(lines: readonly string[], start: number, end: number): boolean {
  for (let i = start; i <= end; i++) if (lines[i]!.trim()) return true;
  return false;
}

/** Fixed windows over lines [from, to], each at most maxLines lines and maxChars characters, overlapping. */
export function windowChunks(lines: readonly string[], opts: ChunkOptions, from = 0, to = lines.length - 1): Chunk[] {
  const out: Chunk[] = [];
  let start = from;
  while (start <= to) {
    let end = start;
    let chars = lines[start]!.length;
    while (end + 1 <= to && end + 1 - start < opts.maxLines && chars + 1 + lines[end + 1]!.length <= opts.maxChars) {
      end++;
      chars += 1 + lines[end]!.length;
    }
    if (hasText(lines, start, end)) out.push(lineChunk(lines, start, end, 'window', opts.maxChars));
    if (end >= to) break;
    // Step back by the overlap, but always move forward.
    start = Math.max(start + 1, end + 1 - opts.overlapLines);
  }
  return out;
}

const isComment = (n: SyntaxNode): boolean => /comment/.test(n.type);

/**
 * Rows where a chunk may start: each child's first row, and inside a child too big for one chunk,
 * its own children's (recursively). Never between a comment and the node right after it.
 */
function boundaries(node: SyntaxNode, size: (a: number, b: number) => number, max: number, out: Set<number>): void {
  const kids = node.children;
  for (let i = 0; i < kids.length; i++) {
    const k = kids[i]!;
    const prev = kids[i - 1];
    const documented = prev !== undefined && isComment(prev) && k.startRow <= prev.endRow + 1;
    if (!documented) out.add(k.startRow);
    if (size(k.startRow, k.endRow) > max && k.children.length > 0) boundaries(k, size, max, out);
  }
}

/**
 * Chunks at syntax boundaries: each chunk runs from one boundary to the furthest later boundary
 * that keeps it within maxChars; a stretch with no boundary that fits (a huge function body) is
 * cut into windows.
 */
export function syntaxChunks(lines: readonly string[], root: SyntaxNode, opts: ChunkOptions): Chunk[] {
  if (lines.length === 0) return [];
  // prefix[i] = characters of lines [0, i) with their newlines.
  const prefix = new Array<number>(lines.length + 1);
  prefix[0] = 0;
  for (let i = 0; i < lines.length; i++) prefix[i + 1] = prefix[i]! + lines[i]!.length + 1;
  const size = (a: number, b: number): number => prefix[b + 1]! - prefix[a]! - 1;
  const marks = new Set<number>([0]);
  boundaries(root, size, opts.maxChars, marks);
  const cuts = [...marks].filter((r) => r > 0 && r < lines.length).sort((a, b) => a - b);
  cuts.push(lines.length);
  const out: Chunk[] = [];
  let start = 0;
  let ci = 0;
  while (start < lines.length) {
    while (ci < cuts.length && cuts[ci]! <= start) ci++;
    // The furthest cut whose chunk [start, cut - 1] fits.
    let best = -1;
    for (let j = ci; j < cuts.length && size(start, cuts[j]! - 1) <= opts.maxChars; j++) best = cuts[j]!;
    if (best < 0) {
      // No boundary fits: windows up to the next boundary.
      const next = cuts[ci] ?? lines.length;
      out.push(...windowChunks(lines, opts, start, next - 1));
      start = next;
      continue;
    }
    if (hasText(lines, start, best - 1)) out.push(lineChunk(lines, start, best - 1, 'syntax', opts.maxChars));
    start = best;
  }
  return out;
}
