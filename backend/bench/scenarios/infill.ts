// infill: fill-in-the-middle latency the way an editor asks for it: a file of 256 lines before
// the cursor and 64 after, sent once to warm the cache, then one request per "keystroke" (the
// line at the cursor grows by a few characters each time). Latency is the whole request.
import { percentile } from '../stats.js';
import { codeLines, seedOf } from '../prompts.js';
import type { BenchContext, Scenario } from '../types.js';
import type { ScenarioRun } from '../../../contract/bench.js';
import { completeInfill, CTX_MARGIN, emptyRun, metric, type InfillAttempt } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

const TYPED = '  const result = measure(items, limit) + offset * count - cursor;';

/**
 * The FIM route the server has: /infill (llama.cpp) or /v1/infill. A missing route (404/405)
 * tries the next; a model without FIM tokens (501 from llama-server, a 4xx naming FIM from ours)
 * is an answer: the scenario cannot run. Returns the path, or why not.
 */
export async function findInfillPath(ctx: BenchContext, out: ScenarioRun, prefix: string, suffix: string, maxTokens: number):
  Promise<{ path: string; first: InfillAttempt } | { unsupported: string }> {
  for (const path of ['/infill', '/v1/infill']) {
    const probe = emptyRun();
    const first = await completeInfill(ctx, path, {
      prefix, suffix, maxTokens, ignoreEos: ctx.info.ignoreEos, signal: AbortSignal.timeout(ctx.settings.requestTimeoutMs),
    }, probe);
    if (first.failed !== null && (first.status === 404 || first.status === 405)) continue;
    if (first.failed !== null && first.status !== null && (first.status === 501 || (first.status < 500 && /\b(fim|infill|fill-in-the-middle)/i.test(first.failed)))) {
      return { unsupported: first.failed };
    }
    // The probe is a real request (the warm-up): it counts.
    for (const k of ['sent', 'completed', 'failed', 'deliveredTokens'] as const) out.requests[k] += probe.requests[k];
    out.requests.failures.push(...probe.requests.failures);
    return { path, first };
  }
  return { unsupported: 'the server has neither /infill nor /v1/infill' };
}

export const infillScenario: Scenario = {
  name: 'infill',
  summary: SCENARIO_MEASURES.infill,
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
    const found = await findInfillPath(ctx, out, prefix, suffix, s.infillGen);
    if ('unsupported' in found) {
      out.notes.push(`skipped: ${found.unsupported}`);
      return out;
    }
    const warm = found.first;
    const latencies: number[] = [];
    const evaluated: number[] = [];
    let produced = Number.POSITIVE_INFINITY;
    ctx.progress(`infill: ${s.infillRequests} requests`);
    for (let i = 0; i < s.infillRequests; i++) {
      const typed = TYPED.slice(0, Math.min(TYPED.length, 3 + 3 * i));
      const got = await completeInfill(ctx, found.path, {
        prefix: prefix + typed, suffix, maxTokens: s.infillGen, ignoreEos: ctx.info.ignoreEos,
        signal: AbortSignal.timeout(s.requestTimeoutMs),
      }, out);
      if (got.r === null) continue;
      latencies.push(got.r.latencyMs);
      if (got.r.timings?.prompt_n !== undefined) evaluated.push(got.r.timings.prompt_n);
      if (got.r.tokens !== null) produced = Math.min(produced, got.r.tokens);
    }
    if (produced < s.infillGen) out.notes.push(`infill: as few as ${produced} of ${s.infillGen} tokens produced in a request`);
    out.metrics.push(
      metric('infill_p50_ms', 'FIM latency p50', 'ms', 'lower', percentile(latencies, 50)),
      metric('infill_p95_ms', 'FIM latency p95', 'ms', 'lower', percentile(latencies, 95)),
      metric('infill_cold_ms', 'FIM latency cold (first)', 'ms', 'info', warm.r?.latencyMs ?? Number.NaN),
    );
    if (evaluated.length > 0) out.metrics.push(metric('infill_prompt_read_tokens', 'prompt tokens read per request (median)', 'tokens', 'info', percentile(evaluated, 50)));
    out.samples.infill_ms = latencies;
    out.conditions = {
      path: found.path, prefixLines: pre, suffixLines: suf, requests: s.infillRequests, maxTokens: s.infillGen,
      promptTokensCold: warm.r?.promptTokens ?? null, cachedTokensCold: warm.r?.cachedTokens ?? null,
    };
    return out;
  },
};
