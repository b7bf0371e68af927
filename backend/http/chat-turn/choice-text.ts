// What the OpenAI chat route and Anthropic's Messages route share: the conversation rendered as
// the model's prompt; one chat answer's text path, the reasoning splitter (a `<think>` block leaves
// as reasoning), then the streaming tool-call parser; and what tool_choice forces the answer to be.
import type { ChatRequest } from '../../validation/schemas.js';
import { renderChatPrompt, type ChatPromptModel, type RenderedPrompt } from '../../chat/chat-prompt.js';
import { reasoningSplitterFor, thinkingTags, type ReasoningFormat, type SplitDelta } from '../../chat/reasoning.js';
import type { CallStyle } from '../../chat/chat-types.js';
import { ToolCallStreamParser } from '../../chat/tool-calls.js';
import { closeOpenThinking, withThinkingDefault, type ReasoningMode } from '../../chat/thinking-switch.js';
import type { ToolCallsAsked } from '../constraint.js';
import type { ChatLogprob } from '../logprob-shapes.js';
import type { ChatDelta } from '../openai-shapes.js';

/**
 * The conversation as the model's prompt with the generation prompt and the tools it was given,
 * the client's text protected (chat/chat-prompt.ts), thinking as the request or else the server's
 * --reasoning sets it (chat/thinking-switch.ts). Throws ChatTemplateError as the template does.
 * `toolsOn`: whether calls are parsed and constrained. tool_choice "none" turns that off but
 * still renders the tools, so the prompt keeps the prefix of the turns around it (an agent's
 * summary turn reuses its slot), as llama-server renders it.
 */
export function renderConversation(
  model: ChatPromptModel, body: Pick<ChatRequest, 'messages' | 'tools' | 'toolChoice' | 'templateKwargs'>, reasoning: ReasoningMode = 'auto',
): { toolsOn: boolean; rendered: RenderedPrompt } {
  const toolsOn = body.tools.length > 0 && body.toolChoice !== 'none';
  const kwargs = withThinkingDefault(body.templateKwargs, reasoning);
  const rendered = renderChatPrompt(model, body.messages, {
    ...(body.tools.length > 0 ? { tools: body.tools } : {}),
    addGenerationPrompt: true,
    ...(Object.keys(kwargs).length ? { extraContext: kwargs } : {}),
  });
  return { toolsOn, rendered: closeOpenThinking(rendered, kwargs) };
}

/** One choice's text path: reasoning splitter, then the tool-call parser; what it produced so far. */
export class ChoiceText {
  readonly parser: ToolCallStreamParser;
  private readonly splitter: ReturnType<typeof reasoningSplitterFor>;
  content = '';
  reasoning = '';
  readonly logprobs: ChatLogprob[] = [];
  /** Tokens written inside the thinking, its tags included (usage's reasoning_tokens). */
  reasoningTokens = 0;
  /** Tokens whose text produced no delta yet (a tag or whitespace held back). */
  private heldTokens = 0;
  private lastKind: ChatDelta['type'] | null = null;

  constructor(style: CallStyle, toolsOn: boolean, reasoningFormat: ReasoningFormat, prompt: string) {
    this.parser = new ToolCallStreamParser(style.format, { toolsEnabled: toolsOn, json: style.json });
    this.splitter = reasoningSplitterFor(reasoningFormat, prompt);
  }

  // Reasoning never reaches the tool-call parser (a call the model only considered is no call).
  private route(pieces: readonly SplitDelta[]): ChatDelta[] {
    return pieces.flatMap((p): ChatDelta[] => (p.type === 'reasoning' ? [p] : this.parser.push(p.text)));
  }

  /** `tokens`: how many generated tokens the text is (0: withheld text released at the end). */
  push(text: string, tokens = 0): ChatDelta[] {
    return this.count(this.splitter ? this.route(this.splitter.push(text)) : this.parser.push(text), tokens);
  }
  end(): ChatDelta[] {
    const out = [...(this.splitter ? this.route(this.splitter.end()) : []), ...this.parser.end()];
    if (out.length === 0 && this.lastKind === 'reasoning') this.reasoningTokens += this.heldTokens;
    return this.count(out, 0);
  }

  // Held-back tokens belong to the thinking when it opens with them (`<think>`) or they close it (`</think>`).
  private count(deltas: ChatDelta[], tokens: number): ChatDelta[] {
    if (deltas.length === 0) { this.heldTokens += tokens; return deltas; }
    if (deltas[0]!.type === 'reasoning' || this.lastKind === 'reasoning') this.reasoningTokens += this.heldTokens;
    if (deltas.every((d) => d.type === 'reasoning')) this.reasoningTokens += tokens;
    this.heldTokens = 0;
    this.lastKind = deltas.at(-1)!.type;
    return deltas;
  }

  collect(deltas: readonly ChatDelta[]): void {
    for (const d of deltas) {
      if (d.type === 'content') this.content += d.text;
      else if (d.type === 'reasoning') this.reasoning += d.text;
    }
  }
}

/**
 * The test switch --first-tool-call required: while a conversation offers tools, leaves the choice
 * to the model (auto) and holds no tool result yet, its answer must be a call. A random-weight
 * model never chooses one itself; with this a client's whole tool loop runs against it.
 */
export function withFirstToolCall<C extends Pick<ChatRequest, 'toolChoice' | 'tools' | 'messages'>>(c: C, mode: 'auto' | 'required'): C {
  if (mode !== 'required' || c.toolChoice !== 'auto' || c.tools.length === 0) return c;
  return c.messages.some((m) => m.role === 'tool') ? c : { ...c, toolChoice: 'required' };
}

/**
 * What tool_choice asks the grammar for: a call of the named tool or of any tool ("required") from
 * the answer's start, or with "auto" calls of any tool once the model opens one (outside its
 * thinking, as the reasoning splitter sees it); null for "none" or no tools.
 */
export function toolCallsAsked(
  body: Pick<ChatRequest, 'toolChoice' | 'tools' | 'parallelToolCalls'>, style: CallStyle,
  reasoningFormat: ReasoningFormat, prompt: string,
): ToolCallsAsked | null {
  if (body.tools.length === 0 || body.toolChoice === 'none') return null;
  const base = { declared: body.tools, style, thinking: null };
  if (typeof body.toolChoice === 'object') {
    const name = body.toolChoice.function.name;
    return { ...base, mode: 'forced', rule: { tools: body.tools.filter((t) => t.function.name === name), several: false } };
  }
  const rule = { tools: body.tools, several: body.parallelToolCalls };
  if (body.toolChoice === 'required') return { ...base, mode: 'forced', rule };
  return { ...base, mode: 'lazy', rule, thinking: thinkingTags(reasoningFormat, prompt) };
}
