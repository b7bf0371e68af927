// A chat conversation -> the model's prompt: its own chat template over the messages (and the
// tools, when they are on), tokenized the way the template's text needs (BOS neither doubled nor
// lost, the template's special tokens parsed). Shared by the OpenAI chat route and Anthropic's
// Messages route, so both tokenize conversations the same way.
import type { ChatMessage, ToolSpec } from '../chat/template.js';
import type { AppContext } from '../server/context.js';
import type { ModelView } from '../server/model-view.js';
import { tokenizeText } from './generation.js';

export interface ChatPromptInput {
  messages: ChatMessage[];
  /** Rendered into the prompt only when non-empty. */
  tools: ToolSpec[];
  templateKwargs: Record<string, unknown>;
}

/** The rendered prompt text (throws ChatTemplateError when the template refuses the messages). */
export function renderChatPrompt(model: ModelView, input: ChatPromptInput): string {
  return model.template.render(input.messages, {
    ...(input.tools.length > 0 ? { tools: input.tools } : {}),
    addGenerationPrompt: true,
    ...(Object.keys(input.templateKwargs).length ? { extraContext: input.templateKwargs } : {}),
  });
}

export async function tokenizeChatPrompt(app: AppContext, model: ModelView, text: string): Promise<number[]> {
  const addSpecial = model.bosText === '' || !text.startsWith(model.bosText);
  return tokenizeText(app, text, addSpecial, true);
}
