// What the bench learns about a server before measuring: model name, slots and context per
// slot (from /props, /metrics or the command line), token counting, and whether it accepts
// llama.cpp's ignore_eos. Recorded in the JSON with every figure.
import { histogramDelta, summarizeBuckets } from '../metrics/latency-histogram.js';
import type { HistogramSnapshot } from '../../contract/metrics.js';
import { BenchHttpError, countTokens, getJson, getText, streamCompletion, tokenizePath, type Target } from './client.js';
import { PromptSizer, type TokenCounter } from './prompts.js';
import type { Metric } from '../../contract/bench.js';
import type { ServerInfo } from '../../contract/bench.js';

export interface DiscoverOptions {
  model?: string;
  slots?: number;
  ctx?: number;
}

/** Drops fields that are long and say nothing about speed (templates, UI settings). */
function trimProps(p: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (k.startsWith('chat_template') || k === 'ui_settings') continue;
    out[k] = v;
  }
  return out;
}

function positiveInt(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}

/** Slot count from /metrics: JSON with total_slots / slots, or a Prometheus `*slots_total` line. */
async function slotsFromMetrics(t: Target): Promise<number | null> {
  const text = await getText(t, '/metrics');
  if (!text) return null;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    return positiveInt(j.total_slots) ?? positiveInt(j.slots_total) ?? (Array.isArray(j.slots) && j.slots.length > 0 ? j.slots.length : null);
  } catch {
    const m = /^\w*(?:slots_total|total_slots)(?:\{[^}]*\})?\s+(\d+)/m.exec(text);
    return m ? positiveInt(Number(m[1])) : null;
  }
}

/**
 * The server's own overhead per streamed token event (engine hand-over -> SSE bytes written) as
 * a histogram, from /metrics: our JSON `event_to_sse`, or `strata:event_to_sse_seconds` in
 * Prometheus text. null for servers that do not measure it (llama-server).
 */
export async function scrapeEventToSse(t: Target): Promise<HistogramSnapshot | null> {
  const text = await getText(t, '/metrics?requests=0');
  if (!text) return null;
  try {
    const h = (JSON.parse(text) as { event_to_sse?: HistogramSnapshot | null }).event_to_sse;
    return h && Array.isArray(h.buckets) && typeof h.count === 'number' ? h : null;
  } catch {
    return eventToSseFromPrometheus(text);
  }
}

export function eventToSseFromPrometheus(text: string): HistogramSnapshot | null {
  const buckets: { le_ms: number; count: number }[] = [];
  for (const m of text.matchAll(/^strata:event_to_sse_seconds_bucket\{le="([^"]+)"\}\s+(\S+)$/gm)) {
    if (m[1] !== '+Inf') buckets.push({ le_ms: Number(m[1]) * 1000, count: Number(m[2]) });
  }
  const count = /^strata:event_to_sse_seconds_count\s+(\S+)$/m.exec(text);
  const sum = /^strata:event_to_sse_seconds_sum\s+(\S+)$/m.exec(text);
  if (!count || !sum) return null;
  return summarizeBuckets(buckets.sort((a, b) => a.le_ms - b.le_ms), Number(count[1]), Number(sum[1]) * 1000);
}

/** A run's share of the histogram as diagnostic figures (none when it streamed no token). */
export function eventToSseMetrics(prefix: string, before: HistogramSnapshot, after: HistogramSnapshot | null): Metric[] {
  const d = after ? histogramDelta(before, after) : null;
  if (!d || d.count <= 0) return [];
  const label = (what: string) => `server overhead per token event ${what} (engine -> SSE)`;
  return [
    { key: `${prefix}_event_to_sse_p50_ms`, label: label('p50'), unit: 'ms', better: 'info', value: d.p50_ms! },
    { key: `${prefix}_event_to_sse_p95_ms`, label: label('p95'), unit: 'ms', better: 'info', value: d.p95_ms! },
  ];
}

/**
 * Waits while /health answers 503 (a server still loading its model); returns at once when it
 * answers otherwise or has no /health; throws when the URL cannot be reached at all.
 */
export async function waitReady(base: Omit<Target, 'model'>, timeoutMs: number, progress: (m: string) => void): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let told = false;
  for (;;) {
    let status: number;
    try {
      const res = await fetch(`${base.url}/health`, { headers: base.apiKey ? { authorization: `Bearer ${base.apiKey}` } : {}, signal: AbortSignal.timeout(5000) });
      status = res.status;
      await res.body?.cancel();
    } catch (err) {
      throw new Error(`cannot reach ${base.url}: ${(err as Error).message}`);
    }
    if (status !== 503) return;
    if (performance.now() > deadline) throw new Error(`${base.url}/health still answers 503 after ${timeoutMs / 1000} s`);
    if (!told) { progress('server is loading (503 on /health): waiting'); told = true; }
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function discover(base: Omit<Target, 'model'>, opts: DiscoverOptions): Promise<{ target: Target; info: ServerInfo }> {
  const rawProps = await getJson({ ...base, model: '' }, '/props') as Record<string, unknown> | null;
  const props = rawProps && typeof rawProps === 'object' ? trimProps(rawProps) : null;
  const models = await getJson({ ...base, model: '' }, '/v1/models');
  const firstModel = (models as { data?: { id?: unknown }[] } | null)?.data?.[0]?.id;
  const model = opts.model ?? (typeof firstModel === 'string' ? firstModel : undefined)
    ?? (typeof props?.model_alias === 'string' ? props.model_alias : 'default');
  const target: Target = { ...base, model };

  // Slots and context per slot: llama-server's /props; ours reports them in /health and in
  // the model list's meta; else /metrics; the command line overrides.
  const health = await getJson(target, '/health') as Record<string, unknown> | null;
  const meta = (models as { data?: { meta?: Record<string, unknown> }[] } | null)?.data?.[0]?.meta;
  const gen = props?.default_generation_settings as Record<string, unknown> | undefined;
  const pick = <S extends string>(c: [S, number | null][]): [S, number] | null => c.find((x): x is [S, number] => x[1] !== null) ?? null;

  let slotsPair = pick<ServerInfo['slotsSource']>([
    ['props', positiveInt(props?.total_slots)], ['health', positiveInt(health?.slots)], ['models', positiveInt(meta?.slots)],
  ]);
  if (!slotsPair) { const n = await slotsFromMetrics(target); if (n) slotsPair = ['metrics', n]; }
  let slots = slotsPair?.[1] ?? null;
  let slotsSource: ServerInfo['slotsSource'] = slotsPair?.[0] ?? 'unknown';
  if (opts.slots) { slots = opts.slots; slotsSource = 'option'; }

  const ctxPair = pick<ServerInfo['ctxSource']>([
    ['props', positiveInt(gen?.n_ctx) ?? positiveInt(props?.n_ctx)], ['health', positiveInt(health?.ctx)], ['models', positiveInt(meta?.n_ctx)],
  ]);
  let ctxPerSlot = ctxPair?.[1] ?? null;
  let ctxSource: ServerInfo['ctxSource'] = ctxPair?.[0] ?? 'unknown';
  if (opts.ctx) { ctxPerSlot = opts.ctx; ctxSource = 'option'; }

  // Probe: a two-token completion with ignore_eos; a server that rejects the field (4xx) gets
  // none. An error inside the stream means the request was taken (random-weight output).
  let ignoreEos = true;
  const probe = async (withEos: boolean): Promise<void> => {
    try {
      await streamCompletion(target, { prompt: 'Hello', maxTokens: 2, ignoreEos: withEos });
    } catch (err) {
      if (!(err instanceof BenchHttpError) && /server error in stream/.test((err as Error).message)) return;
      throw err;
    }
  };
  try {
    await probe(true);
  } catch (err) {
    if (!(err instanceof BenchHttpError) || ![400, 422].includes(err.status)) throw err;
    ignoreEos = false;
    await probe(false);
  }

  return {
    target,
    info: { model, slots, slotsSource, ctxPerSlot, ctxSource, ignoreEos, tokenizePath: await tokenizePath(target), props, health, models },
  };
}

/**
 * A prompt sizer for the server: exact with /tokenize, else calibrated once from the
 * prompt_tokens a completion reports (one short prefill per sample).
 */
export async function makeSizer(target: Target, info: ServerInfo): Promise<PromptSizer> {
  if (info.tokenizePath) {
    const path = info.tokenizePath;
    return PromptSizer.calibrate((text) => countTokens(target, path, text), true);
  }
  const viaUsage: TokenCounter = async (text) => {
    const r = await streamCompletion(target, { prompt: text, maxTokens: 1, ignoreEos: false });
    if (r.promptTokens === null) throw new Error('server has no /tokenize and reports no usage.prompt_tokens: cannot size prompts');
    return r.promptTokens;
  };
  return PromptSizer.calibrate(viaUsage, false);
}

/** True when the server answers /health or /v1/models (used while waiting for a start). */
export async function answers(t: Target): Promise<boolean> {
  return (await getJson(t, '/health', 2000)) !== null || (await getJson(t, '/v1/models', 2000)) !== null;
}
