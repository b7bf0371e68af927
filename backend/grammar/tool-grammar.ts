// Grammars that force a tool call (tool_choice "required" or a named function) in the model's own
// tool-call format, so the streaming parser reads it as a call: one JSON schema per tool for
// {"name": <that tool>, "arguments"|"parameters": <its parameters>} and a root rule that wraps
// the call(s) in the format's markers.
import type { ToolCallFormat, ToolSpec } from '../chat/chat-types.js';

/** A GBNF string literal. */
export function gbnfLiteral(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** What the grammar constrains the answer to: calls of these tools (at least one). */
export interface ForcedCalls {
  tools: ToolSpec[];
  /** More than one call allowed (parallel_tool_calls with tool_choice "required"). */
  several: boolean;
}

function callSchema(tool: ToolSpec, argsKey: 'arguments' | 'parameters'): Record<string, unknown> {
  const params = tool.function.parameters ?? { type: 'object' };
  return {
    type: 'object',
    properties: { name: { const: tool.function.name }, [argsKey]: params },
    required: ['name', argsKey],
    additionalProperties: false,
  };
}

/**
 * The grammar spec for `format` (buildGrammar turns it into GBNF). Llama 3 writes one bare
 * {"name", "parameters"} object, so it gets one call whatever `several` says.
 */
export function toolCallGrammar(format: ToolCallFormat, forced: ForcedCalls): { schemas: Record<string, string>; root: string } {
  const argsKey = format === 'llama3' ? 'parameters' : 'arguments';
  const schemas: Record<string, string> = {};
  forced.tools.forEach((t, i) => { schemas[`call-${i}`] = JSON.stringify(callSchema(t, argsKey)); });
  const call = `(${forced.tools.map((_, i) => `call-${i}`).join(' | ')})`;
  let root: string;
  switch (format) {
    case 'mistral':
      root = `${gbnfLiteral('[TOOL_CALLS][')} ${call} ${forced.several ? `(${gbnfLiteral(',')} ${call})*` : ''} ${gbnfLiteral(']')}`;
      break;
    case 'llama3':
      root = call;
      break;
    default: {
      // hermes, and templates without a native format (tools described Hermes-style)
      const one = `${gbnfLiteral('<tool_call>\n')} ${call} ${gbnfLiteral('\n</tool_call>')}`;
      root = forced.several ? `${one} (${gbnfLiteral('\n')} ${one})*` : one;
    }
  }
  return { schemas, root: root.replace(/ +/g, ' ').trim() };
}
