// A chat prompt's shared start: the tokens of its system messages and tools, which every
// conversation of one agent begins with (a new session, a compacted one). A recurrent model's state
// (Qwen3.5, Qwen3-Next: gated delta nets beside attention) cannot be cut back there, so the engine
// parks a copy of the sequence as it reads past them (GenerateRequest.sharedPrefix) and the prefix
// cache saves that start rather than the whole conversation (prefix-cache/prefix-reuse.ts).
import type { RenderedPrompt } from '../../chat/chat-prompt.js';
import type { ReasoningMode } from '../../chat/thinking-switch.js';
import { MIN_SAVE_TOKENS } from '../../prefix-cache/prefix-reuse.js';
import { commonPrefix } from '../../prefix-cache/prefix-store.js';
import type { ModelView } from '../../served-model/model-view.js';
import type { AppContext } from '../app-context.js';
import { tokenizeChat } from '../generation.js';
import { renderConversation } from './choice-text.js';
import type { ChatConversation } from './turn.js';

/**
 * The prompt's tokens that its leading system messages and tools give (0: none worth keeping, or
 * not a recurrent model): the conversation rendered up to an empty first user message shares them
 * with the prompt. Its tokens are cached by the rendered text, so a session's later turns render
 * it again but do not tokenize it.
 */
export async function sharedStart(
  app: AppContext, model: ModelView, conversation: ChatConversation, prompt: number[], reasoning: ReasoningMode,
): Promise<number> {
  if (!model.info.recurrent || prompt.length < MIN_SAVE_TOKENS) return 0;
  const first = conversation.messages.findIndex((m) => m.role !== 'system');
  if (first < 0 || (first === 0 && conversation.tools.length === 0)) return 0;
  const probe = { ...conversation, messages: [...conversation.messages.slice(0, first), { role: 'user' as const, content: '' }] };
  let rendered: RenderedPrompt;
  try {
    rendered = renderConversation(model, probe, reasoning).rendered;
  } catch {
    return 0;  // a template that refuses the probe: no shared start, nothing else changes
  }
  const key = rendered.segments.map((s) => (s.plain ? '\u0001' : '\u0002') + s.text).join('');
  let tokens = model.sharedStarts.get(key);
  if (!tokens) {
    tokens = await tokenizeChat(app, rendered);
    model.sharedStarts.put(key, tokens);
  }
  const n = commonPrefix(tokens, prompt);
  return n >= MIN_SAVE_TOKENS && n < prompt.length ? n : 0;
}
