// The native side restates each request type: engine_js.cpp reads every field by name. This keeps
// the names it reads equal to the fields addon.d.ts declares, so a field added on one side only
// fails here (the engine also refuses a key it never read: engine-errors.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
// The request parsers: engine_js.cpp, and request.images' in engine_js_images.cpp.
const cpp = ['engine_js.cpp', 'engine_js_images.cpp'].map((f) => readFileSync(join(root, 'native', 'src', f), 'utf8')).join('\n');
const dts = readFileSync(join(root, 'native', 'lib', 'addon.d.ts'), 'utf8');

/** The body of each `Parse…` function, by name. */
function parseFunctions(source: string): Map<string, string> {
  const heads = [...source.matchAll(/^(?:static )?[\w:<>]+ (Parse\w+)\(/gm)];
  const out = new Map<string, string>();
  heads.forEach((m, i) => out.set(m[1]!, source.slice(m.index, heads[i + 1]?.index ?? source.length)));
  return out;
}

/** Keys a body reads through the Fields object `name` (Has/Get), and through `texts("…")` for the triggers. */
function keysRead(body: string, name: string): string[] {
  const keys = [...body.matchAll(new RegExp(`\\b${name}\\.(?:Has|Get)\\("(\\w+)"\\)`, 'g'))].map((m) => m[1]!);
  if (name === 'o') keys.push(...[...body.matchAll(/\btexts\("(\w+)"\)/g)].map((m) => m[1]!));
  return [...new Set(keys)].sort();
}

/** Member names of a declared interface (or of the object type at `path` inside it). */
function declaredKeys(typeName: string, path: string[] = []): string[] {
  const file = ts.createSourceFile('addon.d.ts', dts, ts.ScriptTarget.Latest, true);
  let members: ts.NodeArray<ts.TypeElement> | undefined;
  file.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === typeName) members = node.members;
    if (ts.isTypeAliasDeclaration(node) && node.name.text === typeName) {
      // A union of object types (GrammarSpec): every member of every branch.
      const branches = ts.isUnionTypeNode(node.type) ? node.type.types : [node.type];
      members = ts.factory.createNodeArray(branches.flatMap((b) => (ts.isTypeLiteralNode(b) ? [...b.members] : [])));
    }
  });
  if (!members) throw new Error(`addon.d.ts declares no ${typeName}`);
  for (const step of path) {
    const m: ts.TypeElement | undefined = members.find((x) => x.name && ts.isIdentifier(x.name) && x.name.text === step);
    if (!m || !ts.isPropertySignature(m) || !m.type || !ts.isTypeLiteralNode(m.type)) throw new Error(`${typeName}.${step} is not an object type`);
    members = m.type.members;
  }
  return members.filter((m) => m.name && ts.isIdentifier(m.name)).map((m) => (m.name as ts.Identifier).text).sort();
}

const fns = parseFunctions(cpp);
// [C++ parser, Fields variable, the addon.d.ts type (and path inside it), keys another function reads]
const PAIRS: Array<[string, string, string, string[], string[]]> = [
  ['ParseEngineOptions', 'o', 'EngineOptions', [], ['onEvents', 'onFatal']],
  ['ParseSpeculative', 'o', 'SpeculativeOptions', [], []],
  ['ParseSampling', 'o', 'SamplingParams', [], []],
  ['ParseSampling', 't', 'SamplingParams', ['thinkingBudget'], []],
  ['ParseRequest', 'o', 'GenerateRequest', [], []],
  ['ParseImages', 'o', 'ImageInput', [], []],
  ['ParseGrammarTriggers', 'o', 'GrammarTriggers', [], []],
  ['ParseGrammarTriggers', 'tho', 'GrammarTriggers', ['thinking'], []],
  ['ParseEmbedRequest', 'o', 'EmbedRequest', [], []],
  ['ParseGrammarSpec', 'o', 'GrammarSpec', [], ['gbnf']],
];

describe('engine_js*.cpp read exactly the fields addon.d.ts declares', () => {
  it.each(PAIRS)('%s (%s) ↔ %s', (fn, variable, type, path, elsewhere) => {
    const body = fns.get(fn);
    expect(body, `engine_js.cpp has no ${fn}`).toBeDefined();
    expect(keysRead(body!, variable)).toEqual(declaredKeys(type, path).filter((k) => !elsewhere.includes(k)));
    // What another function reads is named in the RejectUnread call and read there.
    for (const k of elsewhere) expect(body).toContain(`"${k}"`);
  });

  it('every parser reads through Fields and refuses what it did not read', () => {
    expect(cpp).not.toMatch(/\bPresent\(/);
    for (const [fn, body] of fns) {
      if (!/Fields \w+\(/.test(body)) continue;
      const vars = [...body.matchAll(/Fields (\w+)\(/g)].map((m) => m[1]!);
      for (const v of vars) expect(body, `${fn}: ${v}.RejectUnread()`).toMatch(new RegExp(`\\b${v}\\.RejectUnread\\(`));
    }
  });

  it('the callbacks the options leave to engine_wrap.cpp are read there', () => {
    const wrap = readFileSync(join(root, 'native', 'src', 'engine_wrap.cpp'), 'utf8');
    expect(wrap).toContain('Get("onEvents")');
    expect(wrap).toContain('Get("onFatal")');
    expect(wrap).toContain('Get("gbnf")');
  });
});
