// Grammars for tool calls in the model's own format, so the streaming parser reads them as calls
// and their arguments match each tool's JSON schema:
//   - forced (tool_choice "required" or a named function): the whole answer is the call(s);
//   - lazy (tool_choice "auto"): free text until the model writes the format's opener
//     (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`, a bare `{"name": ` at the answer's start),
//     then the call(s) from that opener on (the engine's grammar triggers).
// The grammar writes a call exactly as the model's template renders one (its markers, key order and
// JSON separators), so the next request, which carries the call back, re-renders the very text the
// model wrote and the conversation's KV is reused up to the tool's result.
import type { CallStyle, ToolSpec } from '../chat/chat-types.js';

/** A GBNF string literal. */
export function gbnfLiteral(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** What the grammar lets the answer call: these tools, once or (several) more. */
export interface ToolCallRule {
  tools: ToolSpec[];
  /** More than one call allowed (parallel_tool_calls). */
  several: boolean;
}

/** buildGrammar's spec: one JSON schema per rule, and the root over them. */
export interface ToolGrammarSpec { schemas: Record<string, string>; root: string }

/** Where a lazy tool-call grammar starts (the engine's grammarTriggers, without the thinking part). */
export interface ToolTriggers { words: string[]; atStart: string[] }

const ID_SCHEMA = { type: 'string', pattern: '^[A-Za-z0-9]{9}$' };
const ANY_OBJECT = { type: 'object' };

function parametersOf(tool: ToolSpec): unknown {
  return tool.function.parameters ?? ANY_OBJECT;
}

/** {"name": <this tool>, <argsKey>: <its parameters>(, "id": 9 alphanumerics)}, keys in the template's order. */
function callSchema(tool: ToolSpec, argsKey: 'arguments' | 'parameters', withId: boolean): Record<string, unknown> {
  return {
    type: 'object',
    properties: { name: { const: tool.function.name }, [argsKey]: parametersOf(tool), ...(withId ? { id: ID_SCHEMA } : {}) },
    required: ['name', argsKey, ...(withId ? ['id'] : [])],
    additionalProperties: false,
  };
}

function alternatives(rules: string[]): string {
  return `(${rules.join(' | ')})`;
}

/** One or (several) more of `one`, joined by `sep`. */
function repeated(one: string, sep: string, several: boolean): string {
  return several ? `${one} (${sep ? `${gbnfLiteral(sep)} ` : ''}${one})*` : one;
}

/**
 * The grammar for calls of `rule.tools` in `style`. Llama 3 writes one bare
 * {"name", "parameters"} object (lazy: also after `<|python_tag|>`), whatever `several` says.
 */
export function toolCallGrammar(style: CallStyle, rule: ToolCallRule, mode: 'forced' | 'lazy' = 'forced'): ToolGrammarSpec {
  const schemas: Record<string, string> = {};
  const sep = style.json === 'python' ? ', ' : ',';
  let root: string;
  if (style.format === 'mistral' && style.mistral !== 'array') {
    // [TOOL_CALLS]name([CALL_ID]id)?[ARGS]{...}, each call with its own [TOOL_CALLS].
    const calls = rule.tools.map((t, i) => {
      schemas[`args-${i}`] = JSON.stringify(parametersOf(t));
      const id = style.mistral === 'named-id' ? ` ${gbnfLiteral('[CALL_ID]')} [A-Za-z0-9]{9}` : '';
      return `${gbnfLiteral(t.function.name)}${id} ${gbnfLiteral('[ARGS]')} args-${i}`;
    });
    root = repeated(`${gbnfLiteral('[TOOL_CALLS]')} ${alternatives(calls)}`, '', rule.several);
  } else {
    const argsKey = style.format === 'llama3' ? 'parameters' : 'arguments';
    const withId = style.format === 'mistral';
    rule.tools.forEach((t, i) => { schemas[`call-${i}`] = JSON.stringify(callSchema(t, argsKey, withId)); });
    const call = alternatives(rule.tools.map((_, i) => `call-${i}`));
    switch (style.format) {
      case 'mistral':
        root = `${gbnfLiteral('[TOOL_CALLS][')} ${repeated(call, sep, rule.several)} ${gbnfLiteral(']')}`;
        break;
      case 'llama3':
        root = mode === 'lazy' ? `(${call} | ${gbnfLiteral('<|python_tag|>')} ${call})` : call;
        break;
      default: // hermes, and templates without a native format (tools described Hermes-style)
        root = repeated(`${gbnfLiteral('<tool_call>\n')} ${call} ${gbnfLiteral('\n</tool_call>')}`, '\n', rule.several);
    }
  }
  return { schemas, root: root.replace(/ +/g, ' ').trim() };
}

/** The openers a lazy grammar for `style` starts at. */
export function toolCallTriggers(style: CallStyle): ToolTriggers {
  switch (style.format) {
    case 'mistral': return { words: ['[TOOL_CALLS]'], atStart: [] };
    case 'llama3': return { words: ['<|python_tag|>'], atStart: [style.json === 'python' ? '{"name": ' : '{"name":'] };
    default: return { words: ['<tool_call>'], atStart: [] };
  }
}

/**
 * The converter's GBNF narrowed to JSON exactly as JSON.parse and then the template's `tojson`
 * print it back, so a call sent back re-renders as the text the model wrote:
 *   - its free whitespace becomes the template's separators: every `space` gone, `":" space` and
 *     `"," space` become ": " and ", " (python) or ":" and "," (compact) (json-schema-to-grammar
 *     writes all optional whitespace through the one `space` rule);
 *   - string characters are literal but for \" \\ \b \f \n \r \t (no \uXXXX, no \/);
 *   - numbers have no exponent and no trailing zero in their fraction.
 */
export function withJsonStyle(gbnf: string, json: CallStyle['json']): string {
  const colon = json === 'python' ? '": "' : '":"';
  const comma = json === 'python' ? '", "' : '","';
  return gbnf
    .replace(/^space ::= .*$/m, 'space ::= ""')
    .replace(/^char ::= .*$/m, String.raw`char ::= [^"\\\x7F\x00-\x1F] | [\\] ["\\bfnrt]`)
    .replace(/^decimal-part ::= .*$/m, 'decimal-part ::= [0-9]{0,15} [1-9]')
    .replace(/^number ::= .*$/m, 'number ::= ("-"? integral-part) ("." decimal-part)?')
    .replace(/":" space(?![\w-])/g, colon)
    .replace(/"," space(?![\w-])/g, comma);
}
