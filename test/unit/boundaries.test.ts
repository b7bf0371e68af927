// The import-graph test's sibling: the rules that keep a change to a boundary one edit.
//
// 1. Every engine call (CALL_SPECS, backend/engine/calls.ts) has a host handler
//    (backend/engine/host-calls.ts), a method on the test fake (test/helpers/fake-engine-client.ts),
//    a wire command the host accepts (protocol.ts), and a row in the engine-error table for its plain
//    failures (backend/validation/engine-errors.ts). The compiler asks for most of these; this
//    checks the values too (a handler table built by a spread or a cast would slip past it).
//
// 2. No process reads another's words. Text that came from another process (an engine's error
//    or log line, a server's JSON `reason` or error `message`, a death's `last_error`) is quoted,
//    never matched: what a side needs to decide on is a field of a typed message declared in
//    contract/ or protocol.ts (an error code, an EngineDeathBody). The check: in the folders where
//    another process's text arrives, no regular expression (a literal, or a const bound to one)
//    is applied to an expression that names a carrier of such text (CARRIERS: message, reason,
//    error, detail, lastError, last_error, lastErrorLog, fatal, stderr, stdout, line, lines,
//    tail), by .test/.exec or by .match/.matchAll/.replace/.replaceAll/.search/.split. The few
//    places that must read a dying process's free-form output are listed in EXCEPTIONS with why;
//    an exception that no longer matches fails too, so the list only shrinks.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CALL_NAMES } from '../../backend/engine/calls.js';
import { CALL_HANDLERS } from '../../backend/engine/host-calls.js';
import { parseCommand } from '../../backend/engine/protocol.js';
import { ENGINE_ERROR_CODE } from '../../backend/validation/engine-errors.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

const root = resolve(import.meta.dirname, '../..');

describe('every engine call is one entry with all its parts', () => {
  it('has a host handler, a fake method, a wire command and an error row', () => {
    expect(Object.keys(CALL_HANDLERS).sort()).toEqual([...CALL_NAMES].sort());
    const fake = new FakeEngineClient() as unknown as Record<string, unknown>;
    expect(CALL_NAMES.filter((name) => typeof fake[name] !== 'function')).toEqual([]);
    for (const kind of CALL_NAMES) expect(parseCommand({ kind, epoch: 1, call: 1, args: [] })).toMatchObject({ kind });
    expect(Object.keys(ENGINE_ERROR_CODE.failed).sort()).toEqual([...CALL_NAMES].sort());
  });
});

/** Where another process's text can arrive: every folder of the server and of the extension. */
const RECEIVING = ['backend', 'extension'];
const CARRIERS = new Set(['message', 'reason', 'error', 'detail', 'lastError', 'last_error', 'lastErrorLog', 'fatal', 'stderr', 'stdout', 'line', 'lines', 'tail']);
const ON_TEXT = new Set(['match', 'matchAll', 'replace', 'replaceAll', 'search', 'split']);

/** `file:function` -> why it must read free-form text (each must still match, or be removed from here). */
const EXCEPTIONS: Record<string, string> = {
  // llama.cpp and ggml write straight to fd 2 (GGML_ASSERT aborts before any message can be sent):
  // the engine process's stderr is the only account of its death, and its level is guessed to
  // pick the last error line that EngineDeath.lastError carries.
  'backend/engine/process-client.ts:levelOf': 'the engine\'s raw stderr, the only channel a dying llama.cpp has',
  // The kernel's socket table (/proc/net/tcp), read to see a slow reader's unread bytes: a table, not a message.
  'backend/http/slow-readers.ts:parseProcNetTcp': 'the kernel\'s /proc/net/tcp table',
  // A server process that exited before it could answer /health leaves only its log: the
  // supervisor quotes its last error line and picks the advice (port taken, model missing, memory).
  'extension/server/failures.ts:lastErrorLine': 'an exited server\'s log, all that remains of it',
  'extension/server/failures.ts:classifyExit': 'an exited server\'s log, all that remains of it',
  'extension/server/failures.ts:fitAdvice': 'an exited server\'s log (the fit\'s "it would fit with" line)',
  // Not yet data: `strata bench` reports its progress as log lines on stderr. To go: typed progress
  // lines (contract/bench.ts) written by backend/bench and read here through a schema.
  'extension/bench/bench-progress.ts:line': 'strata bench\'s progress lines (to become typed lines)',
  // The benchmark client measures other servers too (llama-server), whose errors are text only.
  'backend/bench/client.ts:onData': 'another server\'s stream error ("produced output"), text only there',
  'backend/bench/scenarios/infill.ts:findInfillPath': 'another server\'s refusal of an infill route, text only there',
  'backend/bench/server-info.ts:probe': 'another server\'s stream error, text only there',
  // The dynamic loader and ldconfig say what is missing only as text.
  'backend/gpu-backends/library-search.ts:parseLdconfig': '`ldconfig -p`\'s table',
  'backend/gpu-backends/readiness.ts:missingFromDlerror': 'dlerror(), the loader\'s only account of a missing library',
  // node-sqlite3-wasm's SQLite3Error carries sqlite3_errmsg() alone, no result code: SQLITE_BUSY's fixed text is all there is.
  'extension/codebase/store.ts:waitBusy': 'SQLite\'s own text for SQLITE_BUSY (the wasm binding exposes no code)',
  // Not another process's text: the names only look like carriers (a source line, the log's own line, a prefix's tail).
  'backend/bench/scenarios/nextedit.ts:editedRegion': 'a line of the benchmark\'s own source text',
  'backend/log/logger.ts:formatLine': 'escapes the newlines of a line it writes',
  'extension/completion/context-chunks.ts:codebaseQuery': 'the identifiers of the editor\'s text before the cursor',
  'extension/completion/trim.ts:trivial': 'a line of a completion',
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** The names an expression reads: identifiers and property names (`health.reason` -> health, reason). */
function namesIn(node: ts.Node): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n)) out.push(n.text);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

function enclosingFunction(node: ts.Node): string {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name) return n.name.getText();
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && ts.isVariableDeclaration(n.parent)) return n.parent.name.getText();
  }
  return '(top level)';
}

/** Every place a regex is applied to text naming a carrier: `file:function`. */
function regexOnCarriers(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const regexConsts = new Set<string>();
  const carriers = new Set(CARRIERS);
  const hits: string[] = [];
  const isRegex = (e: ts.Expression): boolean => {
    const x = ts.isParenthesizedExpression(e) ? e.expression : e;
    return ts.isRegularExpressionLiteral(x) || (ts.isIdentifier(x) && regexConsts.has(x.text));
  };
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && n.initializer && ts.isRegularExpressionLiteral(n.initializer) && ts.isIdentifier(n.name)) regexConsts.add(n.name.text);
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const method = n.expression.name.text;
      const receiver = n.expression.expression;
      let subject: ts.Node | null = null;
      if ((method === 'test' || method === 'exec') && isRegex(receiver) && n.arguments[0]) subject = n.arguments[0];
      if (ON_TEXT.has(method) && n.arguments[0] && isRegex(n.arguments[0])) subject = receiver;
      if (subject && namesIn(subject).some((name) => carriers.has(name))) hits.push(`${file}:${enclosingFunction(n)}`);
    }
    ts.forEachChild(n, visit);
  };
  // First pass: the consts bound to regexes, and the names that hold a carrier's text (`const text =
  // lines.join('\n')`, `for (const l of lines)`), file-wide and to a fixpoint; a const may be
  // declared below its first use in a function.
  let grew = true;
  while (grew) {
    grew = false;
    ts.forEachChild(sf, function collect(n: ts.Node): void {
      if (ts.isVariableDeclaration(n) && n.initializer && ts.isIdentifier(n.name)) {
        if (ts.isRegularExpressionLiteral(n.initializer)) regexConsts.add(n.name.text);
        else if (!carriers.has(n.name.text) && namesIn(n.initializer).some((x) => carriers.has(x))) { carriers.add(n.name.text); grew = true; }
      }
      if (ts.isForOfStatement(n) && ts.isVariableDeclarationList(n.initializer)) {
        for (const d of n.initializer.declarations) {
          if (ts.isIdentifier(d.name) && !carriers.has(d.name.text) && namesIn(n.expression).some((x) => carriers.has(x))) { carriers.add(d.name.text); grew = true; }
        }
      }
      ts.forEachChild(n, collect);
    });
  }
  visit(sf);
  return hits;
}

describe('no side parses another process\'s message text', () => {
  const hits = [...new Set(RECEIVING.flatMap(sourceFiles).flatMap(regexOnCarriers))].sort();

  it('applies no regex to an error, a reason or a log line outside the listed exceptions', () => {
    expect(hits.filter((h) => !(h in EXCEPTIONS))).toEqual([]);
  });

  it('every exception still matches (a fixed one leaves the list)', () => {
    expect(Object.keys(EXCEPTIONS).filter((e) => !hits.includes(e))).toEqual([]);
  });

  it('the check finds what it is meant to find', () => {
    const probe = join('test', 'fixtures', 'boundaries-probe.ts');
    const written = readFileSync(join(root, probe), 'utf8');
    expect(written).toContain('/after (\\d+) engine deaths/.exec(health.reason');
    expect(regexOnCarriers(relative(root, join(root, probe))).sort()).toEqual([
      `${probe}:deathsOf`, `${probe}:stripped`, `${probe}:viaConst`,
    ]);
  });
});
