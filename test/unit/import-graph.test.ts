// The layout rule "no folder imports a folder that imports it back", checked over the sources'
// import statements (TypeScript's own pre-parser, type-only imports included: a type cycle is
// still a layering cycle). Folders are compared at two levels: the top-level folders (backend,
// extension, webview, contract, native), and the concern folders inside backend/, extension/ and
// webview/ (a deeper folder belongs to its concern; files directly in the top folder form its own
// node). The bundles' entry files compose everything and are imported by nothing, so they are
// not nodes. Files must not form cycles either.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['backend', 'extension', 'webview', 'common', 'contract', 'native/lib', 'tools'];
/** What scripts/bundle.mjs builds from. */
const ENTRY_FILES = ['backend/cli.ts', 'extension/extension.ts', 'webview/main.ts'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** file -> the source files it imports (relative specifiers only; packages are not folders of ours). */
function importGraph(): Map<string, string[]> {
  const files = SOURCE_DIRS.filter((d) => existsSync(join(root, d))).flatMap(sourceFiles);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets: string[] = [];
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      if (ref.fileName.endsWith('.json')) continue; // data (native/pin.json), not code that could import back
      const abs = relative(root, resolve(root, dirname(file), ref.fileName));
      const candidates = [abs.replace(/\.js$/, '.ts'), abs.replace(/\.js$/, '.d.ts'), `${abs}.ts`];
      const hit = candidates.find((c) => known.has(c));
      if (!hit) throw new Error(`${file}: cannot resolve import '${ref.fileName}'`);
      targets.push(hit);
    }
    graph.set(file, targets);
  }
  return graph;
}

const topFolder = (file: string): string => (file.startsWith('native/') ? 'native' : file.split('/')[0]!);
function concernFolder(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/*.ts`;
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The folder graph under `folderOf`, with the files behind each edge of a cycle (to say what to move). */
function folderCycles(graph: Map<string, string[]>, folderOf: (f: string) => string | null): string[] {
  const edges = new Map<string, Set<string>>();
  const why = new Map<string, string[]>();
  for (const [file, targets] of graph) {
    if (ENTRY_FILES.includes(file)) continue;
    const a = folderOf(file);
    for (const t of targets) {
      const b = folderOf(t);
      if (a === null || b === null || a === b) continue;
      if (!edges.has(a)) edges.set(a, new Set());
      edges.get(a)!.add(b);
      const key = `${a} -> ${b}`;
      why.set(key, [...(why.get(key) ?? []), `${file} -> ${t}`]);
    }
  }
  return cycles(edges).map((scc) => {
    const inside = [...why].filter(([k]) => scc.includes(k.split(' -> ')[0]!) && scc.includes(k.split(' -> ')[1]!));
    return `${scc.join(' <-> ')}: ${inside.map(([k, files]) => `${k} (${files.join(', ')})`).join('; ')}`;
  });
}

describe('import graph', () => {
  const graph = importGraph();

  it('has no cycle between top-level folders', () => {
    expect(folderCycles(graph, topFolder)).toEqual([]);
  });

  it('has no cycle between the concern folders of backend/, extension/ and webview/', () => {
    const within = (top: string) => (f: string) => (topFolder(f) === top ? concernFolder(f) : null);
    expect(['backend', 'extension', 'webview'].flatMap((top) => folderCycles(graph, within(top)))).toEqual([]);
  });

  it('has no cycle between files', () => {
    const edges = new Map([...graph].map(([f, ts]) => [f, new Set(ts)] as const));
    expect(cycles(edges)).toEqual([]);
  });

  it('imports no entry file (each bundle composes the rest)', () => {
    const importers = [...graph].filter(([, ts]) => ts.some((t) => ENTRY_FILES.includes(t))).map(([f]) => f);
    expect(importers).toEqual([]);
  });

  /** The imports of files in `from` that leave `allowed` (their own folder always allowed). */
  const outside = (from: string[], allowed: string[]) => [...graph]
    .filter(([f]) => from.includes(topFolder(f)))
    .flatMap(([f, ts]) => ts.filter((t) => ![...allowed, topFolder(f)].includes(topFolder(t)) && !t.startsWith('native/lib/')).map((t) => `${f} -> ${t}`));

  it('keeps the extension on contract/ and common/ (and the addon\'s types) only: never the server\'s folders', () => {
    expect(outside(['extension'], ['contract', 'common'])).toEqual([]);
  });

  it('keeps the webview (a browser page) on contract/ only: common/ is Node code', () => {
    expect(outside(['webview'], ['contract'])).toEqual([]);
  });

  it('keeps contract/ to shapes: it imports none of our folders, and no Node module', () => {
    expect(outside(['contract'], [])).toEqual([]);
    const nodeUsers = [...graph.keys()].filter((f) => topFolder(f) === 'contract' && /from ['"]node:/.test(readFileSync(join(root, f), 'utf8')));
    expect(nodeUsers).toEqual([]);
  });

  it('keeps common/ on contract/ only: both sides import it, it imports neither', () => {
    expect(outside(['common'], ['contract'])).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const fake = new Map([['a/x/1.ts', ['b/y/2.ts']], ['b/y/2.ts', ['a/x/3.ts']], ['a/x/3.ts', []]]);
    expect(folderCycles(fake, topFolder)).toEqual(['a <-> b: a -> b (a/x/1.ts -> b/y/2.ts); b -> a (b/y/2.ts -> a/x/3.ts)']);
    expect(cycles(new Map([['p', new Set(['q'])], ['q', new Set(['p'])], ['r', new Set(['p'])]]))).toEqual([['p', 'q']]);
  });
});
