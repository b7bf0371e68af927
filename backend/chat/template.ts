// The model's chat template (GGUF tokenizer.chat_template) rendered with a real Jinja engine,
// plus what the server needs to know about it: which tool-call format the model writes.
//
// Tokenizing the result: the text contains BOS when the template writes `{{ bos_token }}`.
// Tokenize with parseSpecial=true and addSpecial = !text.startsWith(bosText) (bosText non-empty),
// so BOS is neither doubled nor lost (the vocabulary still decides whether to add one).
import { Template } from '@huggingface/jinja';
import { CHATML_FALLBACK_TEMPLATE } from './chatml-fallback.js';
import { runTemplate, TemplateRaisedError } from './jinja-env.js';
import type { CallStyle, ChatMessage, ToolCallFormat, ToolSpec } from './chat-types.js';
import { templateMessages, type TemplateMessage, type TemplateShape } from './template-input.js';

export interface RenderOptions {
  tools?: ToolSpec[];
  /** Ends the prompt with the assistant header (default true). */
  addGenerationPrompt?: boolean;
  /** Extra template variables (chat_template_kwargs, e.g. enable_thinking); cannot replace messages, tools, tokens. */
  extraContext?: Record<string, unknown>;
}

export interface ChatTemplate {
  /** 'fallback': the model had no usable template and ChatML is used (fallbackReason says why). */
  readonly source: 'model' | 'fallback';
  readonly fallbackReason: string | null;
  /** The format to parse tool calls in (detected from the template text; see nativeTools). */
  readonly toolFormat: ToolCallFormat;
  /** How it writes a call (toolFormat, Mistral's variant, JSON separators), as tool-call grammars must. */
  readonly callStyle: CallStyle;
  /**
   * true: the template renders tools itself. false: it knows no tool format we parse, so tools are
   * described in the system message Hermes-style (`<tool_call>` JSON) and toolFormat is 'hermes'.
   */
  readonly nativeTools: boolean;
  /** Throws ChatTemplateError when the template refuses the messages or fails. */
  render(messages: ChatMessage[], opts: RenderOptions): string;
}

/** kind 'raised': the template's raise_exception refused the input (answer 400); 'render': it failed (500). */
export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError';
  constructor(message: string, readonly kind: 'raised' | 'render') {
    super(message);
  }
}

export interface ChatTemplateOptions {
  /** Clock for strftime_now (tests pin it). */
  now?: () => Date;
}

/** Mistral's call variant a template writes (chat-types.ts CallStyle). */
export function detectMistralStyle(source: string): CallStyle['mistral'] {
  if (source.includes('[CALL_ID]')) return 'named-id';
  return source.includes('[ARGS]') ? 'named' : 'array';
}

/** The tool-call format a template's text teaches the model. */
export function detectToolFormat(source: string): ToolCallFormat {
  if (source.includes('[TOOL_CALLS]')) return 'mistral';
  if (source.includes('<tool_call>') && !source.includes('<function=')) return 'hermes';
  if (source.includes('<|python_tag|>')) return 'llama3';
  if (source.includes('<|start_header_id|>') && /\btools\b/.test(source) && source.includes('parameters')) return 'llama3';
  return 'none';
}

const RESERVED = new Set(['messages', 'tools', 'add_generation_prompt', 'bos_token', 'eos_token', 'raise_exception',
  'strftime_now', 'range', 'true', 'false', 'none', 'True', 'False', 'None']);

const PROBE_ID = 'probe0001';
const PROBE_TOOL: ToolSpec = {
  type: 'function',
  function: { name: 'probe_tool', description: 'probe', parameters: { type: 'object', properties: { probe_arg: { type: 'string' } } } },
};

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class JinjaChatTemplate implements ChatTemplate {
  readonly toolFormat: ToolCallFormat;
  readonly callStyle: CallStyle;
  readonly nativeTools: boolean;
  private readonly shape: TemplateShape;

  constructor(
    private readonly template: Template,
    readonly source: 'model' | 'fallback',
    readonly fallbackReason: string | null,
    private readonly tokens: { bosText: string; eosText: string },
    private readonly now: () => Date,
    sourceText: string,
  ) {
    const detected = detectToolFormat(sourceText);
    this.nativeTools = /\btools\b/.test(sourceText) && detected !== 'none';
    this.toolFormat = this.nativeTools ? detected : 'hermes';
    const mistralIds = this.toolFormat === 'mistral';
    this.shape = {
      nativeTools: this.nativeTools,
      systemRole: this.probeSystemRole(),
      objectArguments: this.nativeTools ? this.probeObjectArguments(mistralIds) : true,
      mistralIds,
    };
    this.callStyle = {
      format: this.toolFormat,
      mistral: detectMistralStyle(sourceText),
      json: this.nativeTools && this.shape.objectArguments ? this.probeJsonStyle(mistralIds) : 'python',
    };
  }

  render(messages: ChatMessage[], opts: RenderOptions): string {
    const tools = opts.tools && opts.tools.length > 0 ? opts.tools : undefined;
    const context: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(opts.extraContext ?? {})) {
      if (!RESERVED.has(k) && v !== undefined) context[k] = JSON.parse(JSON.stringify(v));
    }
    context.messages = templateMessages(messages, this.shape, tools);
    if (tools && this.nativeTools) context.tools = JSON.parse(JSON.stringify(tools));
    try {
      return this.run(context, opts.addGenerationPrompt ?? true);
    } catch (e) {
      if (e instanceof TemplateRaisedError) {
        throw new ChatTemplateError(`chat template rejected the messages: ${e.message}`, 'raised');
      }
      throw new ChatTemplateError(`chat template failed to render: ${errorText(e)}`, 'render');
    }
  }

  /** Renders once to check the template works at all (throws its error otherwise). */
  check(): void {
    this.run({ messages: [{ role: 'user', content: 'Hello' }] }, true);
  }

  private run(context: Record<string, unknown>, addGenerationPrompt: boolean): string {
    return runTemplate(this.template, {
      ...context,
      add_generation_prompt: addGenerationPrompt,
      bos_token: this.tokens.bosText,
      eos_token: this.tokens.eosText,
    }, this.now);
  }

  private tryRun(messages: TemplateMessage[], tools?: ToolSpec[]): string | null {
    try {
      return this.run(tools ? { messages, tools } : { messages }, true);
    } catch {
      return null;
    }
  }

  private probeSystemRole(): boolean {
    const marker = 'SYSTEM-PROBE-7f3a';
    const out = this.tryRun([{ role: 'system', content: marker }, { role: 'user', content: 'Hello' }]);
    return out?.includes(marker) ?? false;
  }

  private probeConversation(mistralIds: boolean, args: unknown): TemplateMessage[] {
    const id = mistralIds ? PROBE_ID : 'call_probe0001';
    return [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: '', tool_calls: [{ id, type: 'function', function: { name: 'probe_tool', arguments: args } }] },
      { role: 'tool', content: 'ok', tool_call_id: id },
      { role: 'user', content: 'Thanks' },
    ];
  }

  /** Templates that print arguments with `tojson` need an object; those that concatenate need the string. */
  private probeObjectArguments(mistralIds: boolean): boolean {
    const asObject = this.tryRun(this.probeConversation(mistralIds, { probe_arg: 'probe-value' }), [PROBE_TOOL]);
    if (asObject?.includes('"probe_arg"')) return true;
    const asString = this.tryRun(this.probeConversation(mistralIds, '{"probe_arg": "probe-value"}'), [PROBE_TOOL]);
    return !(asString?.includes('probe_arg'));
  }

  /** The separators of the template's JSON for an arguments object (python unless it prints compact JSON). */
  private probeJsonStyle(mistralIds: boolean): CallStyle['json'] {
    const out = this.tryRun(this.probeConversation(mistralIds, { probe_arg: [1, 2] }), [PROBE_TOOL]);
    return out?.includes('{"probe_arg":[1,2]}') ? 'compact' : 'python';
  }
}

/**
 * The model's template, or ChatML when it has none or ours cannot run it (source 'fallback',
 * fallbackReason says why). Never throws for a bad template: the model stays usable.
 */
export function createChatTemplate(
  model: { chatTemplate: string | null; bosText: string; eosText: string },
  opts: ChatTemplateOptions = {},
): ChatTemplate {
  const now = opts.now ?? (() => new Date());
  const tokens = { bosText: model.bosText, eosText: model.eosText };
  const fallback = (reason: string): ChatTemplate =>
    new JinjaChatTemplate(new Template(CHATML_FALLBACK_TEMPLATE), 'fallback', reason, tokens, now, CHATML_FALLBACK_TEMPLATE);

  const text = model.chatTemplate;
  if (text === null || text.trim() === '') return fallback('the model has no chat template');
  let parsed: Template;
  try {
    parsed = new Template(text);
  } catch (e) {
    return fallback(`the model's chat template does not parse: ${errorText(e)}`);
  }
  const tpl = new JinjaChatTemplate(parsed, 'model', null, tokens, now, text);
  try {
    tpl.check();
  } catch (e) {
    return fallback(`the model's chat template fails on a plain conversation: ${errorText(e)}`);
  }
  return tpl;
}
