// Checks a client's grammar and JSON schemas against the input limits (limits.ts) before any of it
// reaches the engine: a 400 naming the field and the limit instead of a crashed engine, a request
// held for minutes, or a stack overflow in the schema checker.
import { checkDepth, fail } from './validate.js';
import {
  MAX_GRAMMAR_ALTERNATIVES, MAX_GRAMMAR_BYTES, MAX_GRAMMAR_NESTING, MAX_GRAMMAR_REPEATED_SYMBOLS, MAX_GRAMMAR_REPETITION_NESTING,
  MAX_GRAMMAR_RULES,
  MAX_SCHEMA_BYTES, MAX_TOOL_SCHEMAS_BYTES,
} from './limits.js';

/** What a grammar asks of llama.cpp's parser, read lexically (strings, classes, tokens and comments skipped). */
export interface GrammarShape {
  /** Deepest nesting of `(` groups. */
  nesting: number;
  /** Choices of the grammar's alternations (`a | b | c` counts 3), outside literals. */
  alternatives: number;
  /** `::=` definitions. */
  rules: number;
  /** Symbols written out by `{m,n}` repetitions (bound times the repeated item's length). */
  repeated: number;
  /** Deepest nesting of repetitions (`*`, `+`, `?`, `{m,n}`) inside repeated groups: `(("a"? "b")*)+` is 3. */
  repetitionNesting: number;
}

/** The parser copies a repeated symbol at most this many times (llama.cpp's MAX_REPETITION_THRESHOLD). */
const PARSER_REPETITION_CAP = 2000;

/**
 * Reads the grammar's shape in one pass. The GBNF lexicon as llama.cpp's parser reads it: `"..."`
 * and `[...]` with backslash escapes, `<...>` tokens, `#` comments to the end of the line. An
 * unterminated literal ends the scan (the parser refuses the grammar anyway).
 */
export function grammarShape(text: string): GrammarShape {
  const shape: GrammarShape = { nesting: 0, alternatives: 0, rules: 0, repeated: 0, repetitionNesting: 0 };
  /** The rule's body, then each open group: whether its alternation has a `|`, and its deepest repetition nesting. */
  let frames: Array<{ alt: boolean; height: number }> = [{ alt: false, height: 0 }];
  const top = () => frames[frames.length - 1]!;
  const closeFrame = () => {
    const f = frames.pop()!;
    if (f.alt) shape.alternatives++;
    return f;
  };
  /** Length of the item a following `{m,n}` repeats (1 for a rule, group or any-char). */
  let itemLength = 1;
  /** Repetition nesting of the last item (a group's deepest inside it; 0 for a symbol). */
  let itemHeight = 0;
  /** A quantifier repeats the last item: one level deeper than what it holds. */
  const repeatItem = () => {
    const h = itemHeight + 1;
    shape.repetitionNesting = Math.max(shape.repetitionNesting, h);
    top().height = Math.max(top().height, h);
  };
  const n = text.length;
  let i = 0;
  /** Index after the literal closed by `close` from i (escapes skipped), or n when unterminated. */
  const skipLiteral = (close: string): number => {
    let j = i + 1;
    while (j < n && text[j] !== close) j += text[j] === '\\' ? 2 : 1;
    return Math.min(j + 1, n);
  };
  while (i < n) {
    const c = text[i]!;
    if (c === '"' || c === '[') {
      const end = skipLiteral(c === '"' ? '"' : ']');
      itemLength = Math.max(1, end - i - 2);
      itemHeight = 0;
      i = end;
    } else if (c === '<') {
      const end = text.indexOf('>', i);
      i = end < 0 ? n : end + 1;
      itemLength = 1;
      itemHeight = 0;
    } else if (c === '#') {
      while (i < n && text[i] !== '\n' && text[i] !== '\r') i++;
    } else if (c === '(') {
      frames.push({ alt: false, height: 0 });
      shape.nesting = Math.max(shape.nesting, frames.length - 1);
      i++;
    } else if (c === ')') {
      const f = frames.length > 1 ? closeFrame() : { height: 0 };
      top().height = Math.max(top().height, f.height);
      itemLength = 1;
      itemHeight = f.height;
      i++;
    } else if (c === '|') {
      shape.alternatives++;
      top().alt = true;
      i++;
    } else if (c === ':' && text.startsWith('::=', i)) {
      // A new rule: whatever the last one left open ends here.
      while (frames.length > 0) closeFrame();
      frames = [{ alt: false, height: 0 }];
      shape.rules++;
      i += 3;
    } else if (c === '*' || c === '+' || c === '?') {
      repeatItem();
      i++;
    } else if (c === '{') {
      const close = text.indexOf('}', i);
      const [lo = '', hi] = (close < 0 ? text.slice(i + 1) : text.slice(i + 1, close)).split(',');
      const min = Number(lo.trim()) || 0;
      const max = hi === undefined ? min : hi.trim() === '' ? Infinity : Number(hi.trim()) || 0;
      // The parser writes out max copies, or min when max is open or past its cap.
      const times = Math.min(PARSER_REPETITION_CAP, max <= PARSER_REPETITION_CAP ? max : min);
      shape.repeated += times * itemLength;
      repeatItem();
      i = close < 0 ? n : close + 1;
    } else {
      if (/[\w.-]/.test(c)) { itemLength = 1; itemHeight = 0; }
      i++;
    }
  }
  while (frames.length > 0) closeFrame();
  return shape;
}

/** A client's GBNF grammar within the limits, or a 400 on `param` naming the limit. */
export function checkGrammarLimits(text: string, param: string): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_GRAMMAR_BYTES) fail(param, `is ${bytes} bytes; the limit is ${MAX_GRAMMAR_BYTES} bytes`, 'grammar_too_large');
  checkShape(grammarShape(text), param);
}

/** A grammar the server built (from schemas) within the limits, or a 400 on `param`. */
export function checkShape(shape: GrammarShape, param: string): void {
  if (shape.nesting > MAX_GRAMMAR_NESTING) {
    fail(param, `nests groups ${shape.nesting} levels deep; the limit is ${MAX_GRAMMAR_NESTING}`, 'grammar_too_deep');
  }
  if (shape.rules > MAX_GRAMMAR_RULES) fail(param, `has ${shape.rules} rules; the limit is ${MAX_GRAMMAR_RULES}`, 'grammar_too_large');
  if (shape.alternatives > MAX_GRAMMAR_ALTERNATIVES) {
    fail(param, `has ${shape.alternatives} alternatives; the limit is ${MAX_GRAMMAR_ALTERNATIVES}`, 'grammar_too_large');
  }
  if (shape.repetitionNesting > MAX_GRAMMAR_REPETITION_NESTING) {
    fail(param, `nests repetitions ${shape.repetitionNesting} deep; the limit is ${MAX_GRAMMAR_REPETITION_NESTING}`, 'grammar_too_complex');
  }
  if (shape.repeated > MAX_GRAMMAR_REPEATED_SYMBOLS) {
    fail(param, `repetitions write out ${shape.repeated} symbols; the limit is ${MAX_GRAMMAR_REPEATED_SYMBOLS}`, 'grammar_too_large');
  }
}

/**
 * A JSON schema within the depth and size limits, or a 400 on `param`; its size in bytes as JSON.
 * Depth first and without recursion, so the size (JSON.stringify) never sees a value deep enough
 * to overflow the stack.
 */
export function checkSchemaLimits(schema: unknown, param: string): number {
  checkDepth(schema, param);
  const bytes = Buffer.byteLength(JSON.stringify(schema) ?? '', 'utf8');
  if (bytes > MAX_SCHEMA_BYTES) fail(param, `is ${bytes} bytes as JSON; the limit is ${MAX_SCHEMA_BYTES} bytes`, 'schema_too_large');
  const alternatives = schemaAlternatives(schema);
  if (alternatives > MAX_GRAMMAR_ALTERNATIVES) {
    fail(param, `has ${alternatives} enum values and anyOf/oneOf branches; the limit is ${MAX_GRAMMAR_ALTERNATIVES}`, 'schema_too_large');
  }
  return bytes;
}

/**
 * Enum values and anyOf/oneOf branches in a schema: each becomes an alternative of the grammar it
 * converts to, so this is refused before the engine converts it (the grammar's own check follows).
 */
function schemaAlternatives(schema: unknown): number {
  let count = 0;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node)) {
      for (const key of ['enum', 'anyOf', 'oneOf']) {
        const list = (node as Record<string, unknown>)[key];
        if (Array.isArray(list)) count += list.length;
      }
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return count;
}

/** The tools' schemas together within MAX_TOOL_SCHEMAS_BYTES (each already checked), or a 400 on `param`. */
export function checkToolSchemasTotal(bytes: readonly number[], param: string): void {
  const total = bytes.reduce((a, b) => a + b, 0);
  if (total > MAX_TOOL_SCHEMAS_BYTES) {
    fail(param, `the tools' schemas are ${total} bytes as JSON together; the limit is ${MAX_TOOL_SCHEMAS_BYTES} bytes`, 'schema_too_large');
  }
}
