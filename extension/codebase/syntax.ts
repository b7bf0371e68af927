// Syntax trees for chunking: tree-sitter compiled to WebAssembly with the grammars VS Code itself
// ships (@vscode/tree-sitter-wasm: the runtime and grammars built together), so it loads in any
// Node and any Electron. Grammars load on first use; a file of another language gets no tree and
// is cut into windows instead.
import { join } from 'node:path';
import { Language, Parser, type Node as TsNode } from '@vscode/tree-sitter-wasm';
import type { SyntaxNode } from './chunker.js';

/** File extension -> grammar file (tree-sitter-<name>.wasm). C is parsed with the C++ grammar. */
const GRAMMARS: Record<string, string> = {
  ts: 'typescript', mts: 'typescript', cts: 'typescript', tsx: 'tsx',
  js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
  py: 'python', go: 'go', rs: 'rust', java: 'java', cs: 'c-sharp', rb: 'ruby', php: 'php', sh: 'bash', bash: 'bash', css: 'css',
  c: 'cpp', h: 'cpp', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp', hh: 'cpp', hxx: 'cpp', cu: 'cpp', cuh: 'cpp',
};

/** The grammars the VSIX ships (scripts/bundle.mjs copies these). */
export const GRAMMAR_NAMES: readonly string[] = [...new Set(Object.values(GRAMMARS))];

export function grammarFor(path: string): string | null {
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return null;
  return GRAMMARS[path.slice(dot + 1).toLowerCase()] ?? null;
}

/** A tree-sitter node seen as the chunker's SyntaxNode, its named children read on demand. */
class NodeView implements SyntaxNode {
  private kids: SyntaxNode[] | undefined;
  constructor(private readonly node: TsNode) {}
  get type(): string { return this.node.type; }
  get startRow(): number { return this.node.startPosition.row; }
  get endRow(): number {
    // A node that ends at column 0 ends on the line before (its text stops at a newline).
    const end = this.node.endPosition;
    return end.column === 0 && end.row > this.node.startPosition.row ? end.row - 1 : end.row;
  }
  get children(): readonly SyntaxNode[] {
    this.kids ??= this.node.namedChildren.filter((c): c is TsNode => c !== null).map((c) => new NodeView(c));
    return this.kids;
  }
}

export class SyntaxParsers {
  private init: Promise<void> | undefined;
  private readonly languages = new Map<string, Promise<Language | null>>();
  private parser: Parser | undefined;

  /** `wasmDir` holds tree-sitter.wasm and the tree-sitter-<grammar>.wasm files. */
  constructor(private readonly wasmDir: string, private readonly onError: (message: string) => void = () => {}) {}

  private language(name: string): Promise<Language | null> {
    let got = this.languages.get(name);
    if (!got) {
      this.init ??= Parser.init({ locateFile: (file: string) => join(this.wasmDir, file) });
      got = this.init.then(() => Language.load(join(this.wasmDir, `tree-sitter-${name}.wasm`))).catch((e: unknown) => {
        this.onError(`tree-sitter grammar ${name} did not load (files of it are cut into windows): ${(e as Error).message}`);
        return null;
      });
      this.languages.set(name, got);
    }
    return got;
  }

  /** The file's syntax tree, or null when no grammar covers it. Call dispose() on the result's owner when done. */
  async parse(path: string, text: string, opts: { pause?: () => void } = {}): Promise<{ root: SyntaxNode; dispose(): void } | null> {
    const name = grammarFor(path);
    if (!name) return null;
    const lang = await this.language(name);
    if (!lang) return null;
    this.parser ??= new Parser();
    this.parser.setLanguage(lang);
    // `pause` may block (the chunking worker waits there while a chat is in flight): the parse resumes where it was.
    const tree = opts.pause ? this.parser.parse(text, null, { progressCallback: () => { opts.pause!(); } }) : this.parser.parse(text);
    if (!tree) return null;
    return { root: new NodeView(tree.rootNode), dispose: () => tree.delete() };
  }

  dispose(): void {
    this.parser?.delete();
    this.parser = undefined;
  }
}
