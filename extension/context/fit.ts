// Fits a conversation and its attached context into the model's context, and says what it left
// out: earlier messages first (oldest first, question and answer together), then the context
// pieces (the largest first, cut by lines), never the system prompt or the question. Nothing is
// cut silently: the plan carries a note for the user, or an error when even the question does not
// fit. Token counts come from the caller (the server's tokenizer), so this stays pure.
import type { ChatMessage } from '../../contract/chat.js';
import type { ContextItem } from '../../contract/panel.js';
import { composeUserMessage, contextBlock } from './compose.js';

/** Tokens a chat template adds around each message (role markers, separators), roughly. */
export const MESSAGE_OVERHEAD = 6;

/** Prompt tokens a conversation may use in a context of `ctx` tokens: the rest is kept for the answer. */
export function promptBudget(ctx: number): number {
  return Math.max(1, ctx - Math.min(1024, Math.floor(ctx / 4)));
}

export type CountTokens = (text: string) => Promise<number>;

export interface FitPlan {
  /** What to send: kept messages, the last one the question with its context. */
  messages: ChatMessage[];
  /** Counted prompt size: content tokens (the question and its context blocks counted apart) plus MESSAGE_OVERHEAD per message. */
  tokens: number;
  budget: number;
  /** Earlier messages left out. */
  dropped: number;
  /** Context pieces shortened, and those left out entirely (by label). */
  cut: Array<{ path: string; keptLines: number; totalLines: number }>;
  omitted: string[];
  /** One sentence for the user when something was trimmed, else null. */
  note: string | null;
  /** Set when even the question does not fit: send nothing. */
  error: string | null;
}

interface Piece { item: ContextItem; lines: string[]; kept: number }

/** A file's lines; its final newline ends the last line and starts no new one. */
const linesOf = (text: string): string[] => (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');

const pieceItem = (p: Piece): ContextItem => {
  if (p.kept === p.lines.length) return p.item;
  const start = p.item.range?.startLine ?? 1;
  return {
    ...p.item,
    text: p.lines.slice(0, p.kept).join('\n'),
    range: { startLine: start, endLine: start + p.kept - 1 },
    cutFrom: p.lines.length,
  };
};

/**
 * `messages` ends with the new question (a user message); `context` is attached to it.
 * `budget`: prompt tokens allowed (promptBudget of the model's context per conversation).
 */
export async function fitToContext(messages: readonly ChatMessage[], context: readonly ContextItem[], budget: number, count: CountTokens): Promise<FitPlan> {
  const last = messages[messages.length - 1];
  if (last?.role !== 'user') throw new Error('fitToContext: the conversation must end with the question');
  const system = messages.filter((m, i) => m.role === 'system' && i < messages.length - 1);
  let history = messages.slice(0, -1).filter((m) => m.role !== 'system');
  const pieces: Piece[] = context.map((item) => {
    const lines = linesOf(item.text);
    return { item, lines, kept: lines.length };
  });
  // An image's positions as the server counted them when it was attached.
  const images = (m: ChatMessage): number => (m.images ?? []).reduce((n, i) => n + (i.tokens ?? 0), 0);
  const cost = async (m: ChatMessage): Promise<number> => (await count(m.content)) + images(m) + MESSAGE_OVERHEAD;
  const sum = async (ms: readonly ChatMessage[]): Promise<number> => (await Promise.all(ms.map(cost))).reduce((a, b) => a + b, 0);

  const fixed = await sum(system);
  const live = (): Piece[] => pieces.filter((p) => p.kept > 0);
  const questionMessage = (): ChatMessage => ({ ...last, content: composeUserMessage(last.content, live().map(pieceItem)) });
  // The question and each context block are counted apart (and cached apart), so typing the
  // question does not count an attached file again; the joins between them cost a token or two.
  const questionCost = async (): Promise<number> => {
    const blocks = await Promise.all(live().map((p) => count(contextBlock(pieceItem(p)))));
    return (await count(last.content)) + images(last) + blocks.reduce((a, b) => a + b, 0) + MESSAGE_OVERHEAD;
  };
  let question = await questionCost();
  let past = await sum(history);
  let dropped = 0;

  // 1. Earlier messages, oldest first; a question leaves with its answer.
  while (fixed + past + question > budget && history.length) {
    const n = history[0]!.role === 'user' && history[1]?.role === 'assistant' ? 2 : 1;
    history = history.slice(n);
    dropped += n;
    past = await sum(history);
  }
  // 2. Context pieces, the largest first, cut by lines in proportion to the excess.
  for (let guard = 0; fixed + past + question > budget && guard < pieces.length * 4; guard++) {
    const cand = live();
    if (!cand.length) break;
    const sizes = await Promise.all(cand.map(async (p) => count(contextBlock(pieceItem(p)))));
    const i = sizes.indexOf(Math.max(...sizes));
    const p = cand[i]!;
    const excess = fixed + past + question - budget;
    const keepShare = Math.max(0, (sizes[i]! - excess) / Math.max(1, sizes[i]!));
    // A little under the proportional share: the header and the fence cost tokens too.
    p.kept = Math.min(p.kept - 1, Math.floor(p.kept * keepShare * 0.95));
    if (p.kept < 1) p.kept = 0;
    question = await questionCost();
  }

  const total = fixed + past + question;
  const cut = pieces.filter((p) => p.kept > 0 && p.kept < p.lines.length).map((p) => ({ path: p.item.path, keptLines: p.kept, totalLines: p.lines.length }));
  const omitted = pieces.filter((p) => p.kept === 0).map((p) => p.item.path);
  const plan: FitPlan = {
    messages: [...system, ...history, questionMessage()], tokens: total, budget, dropped, cut, omitted, note: null, error: null,
  };
  if (total > budget) {
    plan.error = `This message needs about ${total} tokens, more than the ${budget} the model's context leaves for a prompt. Shorten it${context.length ? ' or attach less context' : ''}.`;
    return plan;
  }
  const parts = [
    dropped ? `left out ${dropped} earlier message${dropped === 1 ? '' : 's'}` : null,
    ...cut.map((c) => `cut ${c.path} to ${c.keptLines} of ${c.totalLines} lines`),
    ...omitted.map((p) => `left out ${p}`),
  ].filter((x): x is string => x !== null);
  if (parts.length) plan.note = `Trimmed to fit the model's context (${budget} prompt tokens): ${parts.join('; ')}.`;
  return plan;
}
