// Chunking for the codebase index: fixed windows (sizes, overlap, coverage), syntax chunks from a
// real tree-sitter parse (boundaries at declarations, a comment kept with what it documents, a big
// class split at its methods, a huge function cut into windows), over-long lines, and the walk
// (.gitignore per folder, exclude globs, the size cap, binary files, symbolic links).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { splitLines, syntaxChunks, windowChunks, type Chunk, type ChunkOptions } from '../../extension/codebase/chunker.js';
import { grammarFor, SyntaxParsers } from '../../extension/codebase/syntax.js';
import { isIndexable, readText, walk } from '../../extension/codebase/walker.js';

const WASM = join(import.meta.dirname, '../../node_modules/@vscode/tree-sitter-wasm/wasm');
const opts: ChunkOptions = { maxChars: 400, maxLines: 10, overlapLines: 3 };

function covers(chunks: Chunk[], lines: string[]): void {
  const seen = new Set<number>();
  for (const c of chunks) for (let l = c.startLine; l <= c.endLine; l++) seen.add(l);
  lines.forEach((text, i) => { if (text.trim()) expect(seen.has(i + 1), `line ${i + 1} is in no chunk`).toBe(true); });
}

describe('window chunks', () => {
  const lines = Array.from({ length: 47 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 7)}`);

  it('windows of at most maxLines lines and maxChars characters, overlapping by overlapLines, covering every line', () => {
    const chunks = windowChunks(lines, opts);
    expect(chunks[0]).toMatchObject({ startLine: 1, endLine: 10, kind: 'window' });
    for (const c of chunks) {
      expect(c.endLine - c.startLine + 1).toBeLessThanOrEqual(10);
      expect(c.text.length).toBeLessThanOrEqual(400);
      expect(c.text).toBe(lines.slice(c.startLine - 1, c.endLine).join('\n'));
    }
    for (let i = 1; i < chunks.length; i++) expect(chunks[i - 1]!.endLine - chunks[i]!.startLine + 1).toBe(3);
    expect(chunks.at(-1)!.endLine).toBe(47);
    covers(chunks, lines);
  });

  it('a character budget ends a window before its line budget; a line longer than a chunk is cut', () => {
    const wide = Array.from({ length: 6 }, () => 'y'.repeat(150));
    const chunks = windowChunks(wide, opts);
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([[1, 2], [2, 3], [3, 4], [4, 5], [5, 6]]);
    const huge = windowChunks(['z'.repeat(5000)], opts);
    expect(huge).toEqual([{ startLine: 1, endLine: 1, text: 'z'.repeat(400), kind: 'window' }]);
  });

  it('blank stretches make no chunk; a final newline adds no line', () => {
    expect(windowChunks(['', '  ', ''], opts)).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
  });
});

describe('syntax chunks (tree-sitter)', () => {
  const parsers = new SyntaxParsers(WASM);
  afterAll(() => parsers.dispose());

  const method = (name: string, body: number) => [`  ${name}(): number {`, ...Array.from({ length: body }, (_, i) => `    const v${i} = ${i} * 2; // ${name}`), '    return 0;', '  }'];
  const source = [
    'import { x } from "./x";',
    '',
    '/** Adds two numbers. */',
    'export function add(a: number, b: number): number {',
    '  return a + b;',
    '}',
    '',
    'export function sub(a: number, b: number): number {',
    '  return a - b;',
    '}',
    '',
    'export class Big {',
    ...method('first', 8),
    ...method('second', 8),
    ...method('third', 8),
    '}',
    '',
    'export function huge(): string {',
    '  return `',
    ...Array.from({ length: 40 }, (_, i) => `line ${i} of one long string, nothing inside to cut at`),
    '`;',
    '}',
  ];
  const text = `${source.join('\n')}\n`;

  it('cuts at declarations, keeps a doc comment with its function, splits a big class at its methods and a huge body into windows', async () => {
    expect(grammarFor('src/a.ts')).toBe('typescript');
    expect(grammarFor('notes.txt')).toBeNull();
    const tree = await parsers.parse('src/a.ts', text);
    expect(tree).not.toBeNull();
    const lines = splitLines(text);
    const chunks = syntaxChunks(lines, tree!.root, opts);
    tree!.dispose();
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(400);
    covers(chunks, lines);
    const starts = chunks.map((c) => lines[c.startLine - 1]!.trim());
    // The import, add and sub fit one chunk together; the comment is never cut from add.
    expect(chunks[0]).toMatchObject({ startLine: 1, kind: 'syntax' });
    expect(chunks.some((c) => c.text.includes('/** Adds two numbers. */') && c.text.includes('export function add'))).toBe(true);
    expect(starts).not.toContain('export function add(a: number, b: number): number {');
    // The class is too big for one chunk: its methods start chunks.
    expect(starts).toEqual(expect.arrayContaining(['second(): number {', 'third(): number {']));
    // The long string has no boundary inside that fits: windows (overlapping) cover it.
    const hugeAt = lines.indexOf('export function huge(): string {') + 1;
    const windows = chunks.filter((c) => c.kind === 'window');
    expect(windows.length).toBeGreaterThan(1);
    expect(windows[0]!.startLine).toBeGreaterThanOrEqual(hugeAt);
    expect(windows[0]!.startLine).toBeLessThanOrEqual(hugeAt + 1);
    expect(windows.at(-1)!.endLine).toBe(lines.length);
    // Syntax chunks never overlap; they follow each other in order.
    const syntax = chunks.filter((c) => c.kind === 'syntax');
    for (let i = 1; i < syntax.length; i++) expect(syntax[i]!.startLine).toBeGreaterThan(syntax[i - 1]!.endLine);
  });

  it('parses Python and C++ with their grammars; a file of another language gets no tree', async () => {
    const py = await parsers.parse('m.py', 'def f():\n    return 1\n\nclass C:\n    pass\n');
    expect(py!.root.children.map((c) => c.type)).toEqual(['function_definition', 'class_definition']);
    py!.dispose();
    const cpp = await parsers.parse('m.c', 'int f(void) { return 1; }\nstatic int g;\n');
    expect(cpp!.root.children.map((c) => c.type)).toEqual(['function_definition', 'declaration']);
    cpp!.dispose();
    expect(await parsers.parse('README.md', '# hi')).toBeNull();
  });
});

describe('walking a folder', () => {
  const root = mkdtempSync(join(tmpdir(), 'strata-walk-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const put = (p: string, content: string | Buffer): void => {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), content);
  };
  put('.gitignore', 'out/\n*.log\n');
  put('src/a.ts', 'export const a = 1;\n');
  put('src/gen/.gitignore', 'generated.ts\n');
  put('src/gen/generated.ts', 'x');
  put('src/gen/kept.ts', 'y');
  put('out/bundle.js', 'z');
  put('debug.log', 'log');
  put('big.txt', 'b'.repeat(3000));
  put('image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
  put('node_modules/pkg/index.js', 'module.exports = 1;');
  put('docs/skip.md', '# skip');
  symlinkSync(join(root, 'src'), join(root, 'link'));

  it('keeps what .gitignore files (each for its own folder), exclude globs, the size cap and symbolic links leave', async () => {
    const r = await walk(root, { exclude: ['**/node_modules/**', 'docs/**'], maxFileBytes: 2048 });
    expect(r.files.map((f) => f.path)).toEqual(['.gitignore', 'image.bin', 'src/a.ts', 'src/gen/.gitignore', 'src/gen/kept.ts']);
    expect(r.tooLarge).toBe(1);
    expect(await isIndexable(root, 'src/gen/generated.ts', { exclude: [], maxFileBytes: 2048 })).toBe(false);
    expect(await isIndexable(root, 'out/new.js', { exclude: [], maxFileBytes: 2048 })).toBe(false);
    expect(await isIndexable(root, 'docs/skip.md', { exclude: ['docs/**'], maxFileBytes: 2048 })).toBe(false);
    expect(await isIndexable(root, 'src/new.ts', { exclude: [], maxFileBytes: 2048 })).toBe(true);
  });

  it('reads text; binary content, files over the cap and missing files are null', async () => {
    expect(await readText(join(root, 'src/a.ts'), 2048)).toBe('export const a = 1;\n');
    expect(await readText(join(root, 'image.bin'), 2048)).toBeNull();
    expect(await readText(join(root, 'big.txt'), 2048)).toBeNull();
    expect(await readText(join(root, 'nope.ts'), 2048)).toBeNull();
    put('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(await readText(join(root, 'latin1.txt'), 2048)).toBeNull();
  });
});
