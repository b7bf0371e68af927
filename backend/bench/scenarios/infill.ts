// infill: fill-in-the-middle latency the way an editor asks for it: a file of 256 lines before
// the cursor and 64 after, sent once to warm the cache, then one request per "keystroke" (the
// line at the cursor grows by a few characters each time). Latency is the whole request.
import { BenchHttpError, infill, type InfillResult, type Target } from '../client.js';
import { percentile } from '../stats.js';
import { codeLines, seedOf } from '../prompts.js';
import type { BenchContext, Scenario } from '../types.js';
import { CTX_MARGIN, emptyRun, metric } from './common.js';

const TYPED = '  const result = measure(items, limit) + offset * count - cursor;';

type Sent = { path: string; r: InfillResult } | { unsupported: string };

/**
 * /infill (llama.cpp) or /v1/infill, whichever the server has. A missing route (404/405) tries
 * the next; a model without FIM tokens is an answer: the scenario cannot run.
 */
async function send(ctx: BenchContext, paths: string[], prefix: string, suffix: string): Promise<Sent> {
  const t: Target = ctx.target;
  for (const path of paths) {
    try {
      const r = await infill(t, path, {
        prefix, suffix, maxTokens: ctx.settings.infillGen, ignoreEos: ctx.info.ignoreEos,
        signal: AbortSignal.timeout(ctx.settings.requestTimeoutMs),
      });
      return { path, r };
    } catch (err) {
      if (err instanceof BenchHttpError && (err.status === 404 || err.status === 405)) continue;
      // 501 (llama-server), or a 4xx naming FIM/infill (ours: 400 fim_not_supported): the model cannot infill.
      if (err instanceof BenchHttpError && (err.status === 501 || (err.status < 500 && /\b(fim|infill|fill-in-the-middle)/i.test(err.body)))) {
        return { unsupported: err.message };
      }
      throw err;
    }
  }
  return { unsupported: `the server has neither ${paths.join(' nor ')}` };
}

function sent(x: Sent): { path: string; r: InfillResult } {
  if ('unsupported' in x) throw new Error(`infill stopped working after the warm-up: ${x.unsupported}`);
  return x;
}

export const infillScenario: Scenario = {
  name: 'infill',
  summary: 'FIM latency p50/p95, 256-line prefix / 64-line suffix, warm, one request per keystroke',
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    let pre = s.infillPrefixLines;
    let suf = s.infillSuffixLines;
    const limit = ctx.info.ctxPerSlot;
    const need = (pre + suf + 1) * ctx.sizer.tokensPerLine + s.infillGen + CTX_MARGIN;
    if (limit !== null && need > limit) {
      const scale = (limit - s.infillGen - CTX_MARGIN) / need;
      pre = Math.max(1, Math.floor(pre * scale));
      suf = Math.max(1, Math.floor(suf * scale));
      out.notes.push(`file cut to ${pre}/${suf} lines to fit the context per slot (${limit})`);
    }
    const lines = codeLines(seedOf(`infill/${ctx.salt}/${runIndex}`), pre + suf);
    const prefix = `${lines.slice(0, pre).join('\n')}\n`;
    const suffix = `\n${lines.slice(pre).join('\n')}\n`;

    ctx.progress('infill: warm-up');
    const first = await send(ctx, ['/infill', '/v1/infill'], prefix, suffix);
    if ('unsupported' in first) {
      out.notes.push(`skipped: ${first.unsupported}`);
      return out;
    }
    const warm = first;
    const latencies: number[] = [];
    const evaluated: number[] = [];
    let produced = Number.POSITIVE_INFINITY;
    ctx.progress(`infill: ${s.infillRequests} requests`);
    const failures: string[] = [];
    for (let i = 0; i < s.infillRequests; i++) {
      const typed = TYPED.slice(0, Math.min(TYPED.length, 3 + 3 * i));
      let got: { path: string; r: InfillResult };
      try {
        got = sent(await send(ctx, [warm.path], prefix + typed, suffix));
      } catch (err) {
        // llama-server answers 500 when random-weight output fails its response parser; such a
        // request is left out of the latencies and counted, it does not end the run.
        if (err instanceof BenchHttpError && err.status === 500) { failures.push(err.message); continue; }
        throw err;
      }
      latencies.push(got.r.latencyMs);
      if (got.r.timings?.prompt_n !== undefined) evaluated.push(got.r.timings.prompt_n);
      if (got.r.tokens !== null) produced = Math.min(produced, got.r.tokens);
    }
    if (failures.length > 0) out.notes.push(`${failures.length} of ${s.infillRequests} requests failed, left out: ${failures[0]!.slice(0, 160)}`);
    if (produced < s.infillGen) out.notes.push(`infill: as few as ${produced} of ${s.infillGen} tokens produced in a request`);
    out.metrics.push(
      metric('infill_p50_ms', 'FIM latency p50', 'ms', 'lower', percentile(latencies, 50)),
      metric('infill_p95_ms', 'FIM latency p95', 'ms', 'lower', percentile(latencies, 95)),
      metric('infill_cold_ms', 'FIM latency cold (first)', 'ms', 'info', warm.r.latencyMs),
    );
    if (evaluated.length > 0) out.metrics.push(metric('infill_prompt_read_tokens', 'prompt tokens read per request (median)', 'tokens', 'info', percentile(evaluated, 50)));
    out.samples.infill_ms = latencies;
    out.conditions = {
      path: warm.path, prefixLines: pre, suffixLines: suf, requests: s.infillRequests, maxTokens: s.infillGen,
      promptTokensCold: warm.r.promptTokens, cachedTokensCold: warm.r.cachedTokens,
    };
    return out;
  },
};
