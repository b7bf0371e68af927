// What the OpenAI chat route and Anthropic's Messages route share: the conversation rendered as
// the model's prompt; one chat answer's text path, the reasoning splitter (a `<think>` block leaves
// as reasoning), then the streaming tool-call parser; and what tool_choice forces the answer to be.
import type { ChatRequest } from '../validation/schemas.js';
import { renderChatPrompt, type ChatPromptModel, type RenderedPrompt } from '../chat/chat-prompt.js';
import { reasoningSplitterFor, thinkingTags, type ReasoningFormat, type SplitDelta } from '../chat/reasoning.js';
import type { CallStyle } from '../chat/chat-types.js';
import { ToolCallStreamParser } from '../chat/tool-calls.js';
import type { ToolCallsAsked } from './constraint.js';
import type { ChatLogprob } from './logprob-shapes.js';
import type { ChatDelta } from './openai-shapes.js';

/**
 * The conversation as the model's prompt with the generation prompt, tools only when they are on,
 * the client's text protected (chat/chat-prompt.ts). Throws ChatTemplateError as the template does.
 */
export function renderConversation(
  model: ChatPromptModel, body: Pick<ChatRequest, 'messages' | 'tools' | 'toolChoice' | 'templateKwargs'>,
): { toolsOn: boolean; rendered: RenderedPrompt } {
  const toolsOn = body.tools.length > 0 && body.toolChoice !== 'none';
  const rendered = renderChatPrompt(model, body.messages, {
    ...(toolsOn ? { tools: body.tools } : {}),
    addGenerationPrompt: true,
    ...(Object.keys(body.templateKwargs).length ? { extraContext: body.templateKwargs } : {}),
  });
  return { toolsOn, rendered };
}

/** One choice's text path: reasoning splitter, then the tool-call parser; what it produced so far. */
export class ChoiceText {
  readonly parser: ToolCallStreamParser;
  private readonly splitter: ReturnType<typeof reasoningSplitterFor>;
  content = '';
  reasoning = '';
  readonly logprobs: ChatLogprob[] = [];

  constructor(style: CallStyle, toolsOn: boolean, reasoningFormat: ReasoningFormat, prompt: string) {
    this.parser = new ToolCallStreamParser(style.format, { toolsEnabled: toolsOn, json: style.json });
    this.splitter = reasoningSplitterFor(reasoningFormat, prompt);
  }

  // Reasoning never reaches the tool-call parser (a call the model only considered is no call).
  private route(pieces: readonly SplitDelta[]): ChatDelta[] {
    return pieces.flatMap((p): ChatDelta[] => (p.type === 'reasoning' ? [p] : this.parser.push(p.text)));
  }

  push(text: string): ChatDelta[] {
    return this.splitter ? this.route(this.splitter.push(text)) : this.parser.push(text);
  }
  end(): ChatDelta[] { return [...(this.splitter ? this.route(this.splitter.end()) : []), ...this.parser.end()]; }

  collect(deltas: readonly ChatDelta[]): void {
    for (const d of deltas) {
      if (d.type === 'content') this.content += d.text;
      else if (d.type === 'reasoning') this.reasoning += d.text;
    }
  }
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
