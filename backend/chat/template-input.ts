// Turns OpenAI-shaped chat messages into what Jinja chat templates expect: text content, no
// undefined keys (Jinja's `'tool_calls' in message` would see them), tool-call arguments as
// objects when the template prints them with `tojson`, and — for templates that cannot — tool
// history and system prompts folded into roles the template does know.
import type { ChatMessage, ContentPart, ToolCall, ToolSpec } from './chat-types.js';
import { TOOLS_PROMPT_HEAD, TOOLS_PROMPT_TAIL } from './chatml-fallback.js';

/** A message as templates see it (plain JSON). */
export interface TemplateMessage {
  role: string;
  content: string;
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: unknown } }>;
}

export interface TemplateShape {
  /** The template renders `tools` and tool messages itself. */
  nativeTools: boolean;
  /** The template accepts a system message (else it is merged into the first user message). */
  systemRole: boolean;
  /** Tool-call arguments go in as objects (parsed JSON) rather than the JSON string. */
  objectArguments: boolean;
  /** Mistral templates demand 9-character alphanumeric tool-call ids. */
  mistralIds: boolean;
}

/** Text parts joined by newlines, as llama.cpp does; other part types carry no text for a template. */
export function contentText(content: string | ContentPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((p): p is { type: 'text'; text: string } => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('\n');
}

/** Python json.dumps spacing (", " and ": "), which is what templates' tojson writes. */
export function pyJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map(pyJson).join(', ') + ']';
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return '{' + entries.map(([k, v]) => JSON.stringify(k) + ': ' + pyJson(v)).join(', ') + '}';
}

/** The tool instructions as one text, for templates that do not render `tools` themselves. */
export function toolsPrompt(tools: readonly unknown[]): string {
  return TOOLS_PROMPT_HEAD + tools.map((t) => '\n' + pyJson(t)).join('') + TOOLS_PROMPT_TAIL;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;   // not JSON: the template gets the string as the client sent it
  }
}

/** A deterministic 9-character alphanumeric id for Mistral templates (same input, same id). */
export function mistralToolCallId(id: string): string {
  if (/^[A-Za-z0-9]{9}$/.test(id)) return id;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let h1 = 0x811c9dc5, h2 = 0x01000193;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  let out = '';
  for (let i = 0; i < 9; i++) {
    const v = i < 5 ? h1 : h2;
    out += alphabet[(v >>> ((i % 5) * 6)) % 62];
  }
  return out;
}

function toolCallText(call: ToolCall): string {
  return `<tool_call>\n{"name": ${JSON.stringify(call.function.name)}, "arguments": `
    + `${pyJsonOrRaw(call.function.arguments)}}\n</tool_call>`;
}

function pyJsonOrRaw(args: string): string {
  const parsed = parseArguments(args);
  return typeof parsed === 'string' ? JSON.stringify(parsed) : pyJson(parsed);
}

/**
 * Folds tool history for templates without tool support: assistant calls become `<tool_call>`
 * text, runs of tool results become one user message of `<tool_response>` blocks, and the tool
 * list goes into the system message.
 */
function foldTools(messages: TemplateMessage[], source: ChatMessage[], tools: ToolSpec[] | undefined): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  // The user message holding folded tool results, while it is the last one: later results and
  // a following user message join it, so templates that demand alternating roles accept it.
  let folded: TemplateMessage | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const calls = source[i]!.tool_calls;
    if (m.role === 'assistant' && calls && calls.length > 0) {
      const text = calls.map(toolCallText).join('\n');
      out.push({ role: 'assistant', content: m.content ? m.content + '\n' + text : text });
      folded = null;
    } else if (m.role === 'tool') {
      const block = `<tool_response>\n${m.content}\n</tool_response>`;
      if (folded) {
        folded.content += '\n' + block;
      } else {
        folded = { role: 'user', content: block };
        out.push(folded);
      }
    } else if (m.role === 'user' && folded) {
      folded.content += '\n' + m.content;
      folded = null;
    } else {
      out.push(m);
      folded = null;
    }
  }
  if (tools && tools.length > 0) {
    const prompt = toolsPrompt(tools);
    const first = out[0];
    if (first && first.role === 'system') first.content = first.content ? first.content + '\n\n' + prompt : prompt;
    else out.unshift({ role: 'system', content: prompt });
  }
  return out;
}

/** System messages merged into the next user message (llama.cpp's polyfill, newline-joined). */
function mergeSystem(messages: TemplateMessage[]): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  let pending: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') { pending.push(m.content); continue; }
    if (m.role === 'user' && pending.length > 0) {
      out.push({ ...m, content: [...pending, m.content].join('\n') });
      pending = [];
    } else {
      out.push(m);
    }
  }
  if (pending.length > 0) out.push({ role: 'user', content: pending.join('\n') });
  return out;
}

export function templateMessages(messages: ChatMessage[], shape: TemplateShape, tools: ToolSpec[] | undefined): TemplateMessage[] {
  let out: TemplateMessage[] = messages.map((m) => {
    const t: TemplateMessage = { role: m.role, content: contentText(m.content) };
    if (m.name !== undefined) t.name = m.name;
    if (m.tool_call_id !== undefined) t.tool_call_id = shape.mistralIds ? mistralToolCallId(m.tool_call_id) : m.tool_call_id;
    if (m.tool_calls && m.tool_calls.length > 0) {
      t.tool_calls = m.tool_calls.map((c) => ({
        id: shape.mistralIds ? mistralToolCallId(c.id) : c.id,
        type: 'function' as const,
        function: {
          name: c.function.name,
          arguments: shape.objectArguments ? parseArguments(c.function.arguments) : c.function.arguments,
        },
      }));
    }
    return t;
  });
  if (!shape.nativeTools) out = foldTools(out, messages, tools);
  if (!shape.systemRole) out = mergeSystem(out);
  return out;
}
