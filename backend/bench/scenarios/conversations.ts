// conversations: many users chatting at once with fewer slots than users. `convUsers` users take
// `convTurns` turns each, round robin, `convInFlight` requests at a time; all share a system
// prompt, each pastes a file in its first turn and asks short questions after. Every request is
// the whole conversation so far (raw completion text), so what a server computes shows what its
// cache kept. Figures: prompt tokens computed (the server's counter) beside the minimum (every
// token read once: what no earlier prompt or answer already began with), and TTFT per turn.
import { postJson, scrapePromptComputed } from '../client.js';
import { codeLines, proseWords, seedOf } from '../prompts.js';
import { median } from '../stats.js';
import type { BenchContext, Scenario } from '../types.js';
import { complete, completed, emptyRun, metric, nonceFor, type Attempt } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

interface Turn { user: number; turn: number; prompt: string; attempt: Attempt | null }

const commonPrefix = (a: readonly number[], b: readonly number[]): number => {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
};

/**
 * Tokens a perfect cache would still have to read: for each request in order, its prompt
 * tokens beyond the longest prefix it shares with any earlier request's prompt or prompt +
 * answer. `seen[i]` are the token sequences request i left behind.
 */
export function minimumPromptTokens(prompts: readonly (readonly number[])[], seen: readonly (readonly (readonly number[])[])[]): number {
  let total = 0;
  for (let i = 0; i < prompts.length; i++) {
    let best = 0;
    for (let j = 0; j < i; j++) for (const s of seen[j]!) best = Math.max(best, commonPrefix(prompts[i]!, s));
    total += prompts[i]!.length - best;
  }
  return total;
}

async function tokenize(ctx: BenchContext, text: string): Promise<number[]> {
  const j = await postJson(ctx.target, ctx.info.tokenizePath!, { content: text, add_special: false, model: ctx.target.model }) as { tokens?: unknown };
  if (!Array.isArray(j.tokens)) throw new Error(`${ctx.info.tokenizePath}: answer has no "tokens" array`);
  return j.tokens.map((t) => (typeof t === 'number' ? t : Number((t as { id?: unknown }).id)));
}

export const conversations: Scenario = {
  name: 'conversations',
  summary: SCENARIO_MEASURES.conversations,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    // One system prompt for every user of the run, new in every run (a nonce starts it).
    const system = `### System\n${(await ctx.sizer.prose(s.convSystemTokens, seedOf('conv/system'), nonceFor(ctx, 'conv', runIndex))).text}\n\n`;
    const fileLines = ctx.sizer.linesFor(s.convFileTokens);
    const question = (u: number, k: number) => proseWords(seedOf(`conv/q/${u}/${k}`), Math.max(4, Math.round(s.convQuestionTokens / ctx.sizer.tokensPerWord)));
    const history: string[] = Array.from({ length: s.convUsers }, () => system);
    const order: Turn[] = [];
    for (let k = 0; k < s.convTurns; k++) for (let u = 0; u < s.convUsers; u++) order.push({ user: u, turn: k, prompt: '', attempt: null });

    ctx.progress(`conversations: ${s.convUsers} users x ${s.convTurns} turns, ${s.convInFlight} in flight`);
    const before = await scrapePromptComputed(ctx.target);
    const ready: Array<Promise<void>> = Array.from({ length: s.convUsers }, () => Promise.resolve());
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < order.length) {
        const t = order[next++]!;
        await ready[t.user]; // a user's next turn needs the answer to the last one
        const ask = t.turn === 0
          ? `Please review this file of user ${t.user}:\n${codeLines(seedOf(`conv/file/${t.user}`), fileLines).join('\n')}`
          : question(t.user, t.turn);
        t.prompt = `${history[t.user]}### User\n${ask}\n\n### Assistant\n`;
        const done = complete(ctx, t.prompt, s.convAnswerTokens, out).then((a) => {
          t.attempt = a;
          history[t.user] = `${t.prompt}${a.text}\n\n`;
        });
        ready[t.user] = done;
        await done;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, s.convInFlight) }, worker));
    const after = await scrapePromptComputed(ctx.target);

    const ok = completed(order.map((t) => ({ ...t, failed: t.attempt ? t.attempt.failed : 'not sent' })));
    for (let k = 0; k < s.convTurns; k++) {
      const ttfts = ok.filter((t) => t.turn === k).map((t) => t.attempt!.ttftMs);
      out.metrics.push(metric(`conv_turn${k + 1}_ttft_ms`, `turn ${k + 1}: TTFT p50`, 'ms', 'lower', median(ttfts)));
    }
    out.metrics.push(metric('conv_ttft_p50_ms', 'TTFT p50, all turns', 'ms', 'lower', median(ok.map((t) => t.attempt!.ttftMs))));
    if (before === null || after === null) {
      out.notes.push('the server reports no prompt-token counter (llama-server needs --metrics): tokens computed not measured');
    } else {
      out.metrics.push(metric('conv_prompt_tokens', 'prompt tokens computed', 'tokens', 'lower', after - before));
      if (ctx.info.tokenizePath && ok.length === order.length) {
        // After the measured part: tokenizing costs the server nothing while it is timed.
        const prompts = await Promise.all(order.map((t) => tokenize(ctx, t.prompt)));
        const answered = await Promise.all(order.map((t) => tokenize(ctx, `${t.prompt}${t.attempt!.text}`)));
        const min = minimumPromptTokens(prompts, prompts.map((p, i) => [p, answered[i]!]));
        out.metrics.push(
          metric('conv_min_prompt_tokens', 'minimum possible (each token read once)', 'tokens', 'info', min),
          metric('conv_vs_min', 'computed / minimum', 'ratio', 'info', (after - before) / min),
        );
      } else {
        out.notes.push('minimum not computed (no /tokenize, or a request failed)');
      }
    }
    out.conditions = {
      users: s.convUsers, turns: s.convTurns, inFlight: s.convInFlight, slots: ctx.info.slots, systemTokens: s.convSystemTokens,
      fileLines, answerTokens: s.convAnswerTokens, promptCounterBefore: before, promptCounterAfter: after,
    };
    return out;
  },
};
