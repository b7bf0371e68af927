// npm run bench:responses [-- options]: a multi-turn conversation through the Responses API, the
// way each server continues one. Strata: each turn sends only the new user message with
// `previous_response_id` (the server holds the conversation). llama-server (built from the same
// pinned llama.cpp, --jinja): it refuses `previous_response_id`, so each turn sends the whole
// conversation (every earlier user message and the output message it answered with), as a
// stateless client does. Same model, threads, one slot each; the turns alternate between the
// servers (turn k on Strata, then turn k on llama-server), one request at a time, streamed.
// Figures per turn and side: TTFT (to the first response.output_text.delta), prompt tokens
// computed (the server's own /metrics counter over the request; usage's input_tokens less
// input_tokens_details.cached_tokens beside it), and the tokens the turn adds (input_tokens less
// the previous turn's input and output: what a server that kept the conversation must read).
// Greedy; llama-server's requests ban the tokens that are not valid UTF-8 alone (it ends such
// answers with HTTP 500; Strata's Responses API takes no logit_bias and needs none).
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { optInt, optString, parseArgs } from '../backend/args/args.js';
import { rejectUnknownOptions, runBench } from '../backend/args/command-usage.js';
import { banBias, scrapePromptComputed, type Target } from '../backend/bench/client.js';
import { percentile } from '../backend/bench/stats.js';
import { invalidUtf8TokensOf } from '../backend/bench/utf8-tokens.js';
import { llamaServerBinary } from './bench-compare/compare-main.js';
import { modelLoaded, ServerProcess, type LaunchSpec } from './bench-compare/launch.js';
import { ensureModel } from '../backend/models/stand-in.js';
import { freePort } from '../common/net/free-port.js';
import { SseDecoder } from '../common/net/sse-decoder.js';

const usage = `usage: npm run bench:responses [-- options]

  --turns N          turns of the conversation (default 10)
  --paste-lines N    lines of code pasted into turn 1 (default 60, about 900 tokens)
  --output-tokens N  max_output_tokens of each turn (default 32)
  --ctx N            context of the one slot each (default 8192)
  --threads T        threads of both servers (default: all cores)
  --model FILE       GGUF to serve (default: the 0.5b stand-in, Qwen2.5-Coder-0.5B shapes and
                     tokenizer, random f16 weights, made once and cached)
  --out DIR          where the JSON and markdown go (default test-output/bench)
`;

const OPTIONS = ['turns', 'paste-lines', 'output-tokens', 'ctx', 'threads', 'model', 'out', 'help'];

function log(m: string): void { process.stderr.write(`[bench:responses] ${m}\n`); }

const INSTRUCTIONS = 'You are a coding assistant. Answer briefly.';

/** Turn k's user message: turn 1 pastes a file, the others ask a short question about it. */
function userText(k: number, pasteLines: number): string {
  if (k === 0) {
    const code = Array.from({ length: pasteLines }, (_, i) => `  const v${i} = compute(${i}, "item-${i * 7 % 13}") + offset${i % 5};`).join('\n');
    return `Here is a function:\n\nfunction run(offset0, offset1, offset2, offset3, offset4) {\n${code}\n}\n\nWhat does it do?`;
  }
  return `Question ${k + 1}: what would change if v${k} used offset${(k + 2) % 5} instead, and why does line ${k * 3} matter?`;
}

interface Turn { ttftMs: number; inputTokens: number; cachedTokens: number; outputTokens: number; computed: number; added: number; text: string; id: string }

/** One streamed /v1/responses request: TTFT, the text and the usage of its response.completed. */
async function respond(t: Target, body: Record<string, unknown>): Promise<Omit<Turn, 'computed' | 'added'>> {
  const sent = performance.now();
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }), signal: AbortSignal.timeout(900_000),
  });
  if (!res.ok || !res.body) throw new Error(`${t.url}/v1/responses: HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const sse = new SseDecoder();
  let ttftMs = Number.NaN;
  let text = '';
  let done: Record<string, unknown> | null = null;
  const take = (events: ReturnType<SseDecoder['feed']>): void => {
    for (const e of events) {
      if (!e.data || e.data === '[DONE]') continue;
      const ev = JSON.parse(e.data) as { type?: string; delta?: string; response?: Record<string, unknown> };
      if (ev.type === 'response.output_text.delta') {
        if (Number.isNaN(ttftMs)) ttftMs = performance.now() - sent;
        text += ev.delta ?? '';
      } else if (ev.type === 'response.completed' || ev.type === 'response.incomplete') done = ev.response ?? null;
      else if (ev.type === 'response.failed' || ev.type === 'error') throw new Error(`${t.url}: ${e.data.slice(0, 300)}`);
    }
  };
  const reader = res.body.getReader();
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    take(sse.feed(value));
  }
  take(sse.end());
  const final = done as { id?: string; usage?: { input_tokens?: number; output_tokens?: number; input_tokens_details?: { cached_tokens?: number } } } | null;
  if (!final?.usage) throw new Error(`${t.url}: the stream ended without a completed response`);
  return {
    ttftMs, text, id: final.id ?? '', inputTokens: final.usage.input_tokens ?? 0, outputTokens: final.usage.output_tokens ?? 0,
    cachedTokens: final.usage.input_tokens_details?.cached_tokens ?? 0,
  };
}

export function main(argv: string[], root: string): Promise<number> {
  return runBench('responses', usage, () => bench(argv, root));
}

async function bench(argv: string[], root: string): Promise<number> {
  const args = parseArgs(argv);
  if (args.options.has('help')) { process.stdout.write(usage); return 0; }
  rejectUnknownOptions(args, OPTIONS);
  const turns = optInt(args, 'turns', 1, 1000) ?? 10;
  const pasteLines = optInt(args, 'paste-lines', 1, 100_000) ?? 60;
  const outputTokens = optInt(args, 'output-tokens', 1, 4096) ?? 32;
  const ctx = optInt(args, 'ctx', 512, 1 << 22) ?? 8192;
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const outDir = resolve(root, optString(args, 'out') ?? join('test-output', 'bench'));
  mkdirSync(outDir, { recursive: true });
  const model = optString(args, 'model') ?? await ensureModel({ vocab: 'qwen2.5-coder', shape: '0.5b', quant: 'f16', seed: 1 });
  const banned = await invalidUtf8TokensOf(model);
  const bin = llamaServerBinary(root);
  const [portA, portB] = [await freePort(), await freePort()];
  const strata: Target = { url: `http://127.0.0.1:${portA}`, model: 'bench' };
  const llama: Target = { url: `http://127.0.0.1:${portB}`, model: 'bench' };
  const specs: LaunchSpec[] = [
    {
      name: 'strata', command: process.execPath, url: strata.url, logFile: join(outDir, 'responses-strata.log'),
      args: [join(root, 'dist', 'strata.mjs'), 'serve', '--model', model, '--port', String(portA), '--slots', '1', '--ctx', String(ctx), '--threads', String(threads)],
    },
    {
      name: 'llama-server', command: bin, url: llama.url, logFile: join(outDir, 'responses-llama-server.log'),
      args: ['-m', model, '--host', '127.0.0.1', '--port', String(portB), '-t', String(threads), '-tb', String(threads), '-c', String(ctx), '-np', '1',
        '--jinja', '--no-webui', '--metrics'],
    },
  ];
  const startedAt = new Date();
  const servers: ServerProcess[] = [];
  const got: { strata: Turn[]; llama: Turn[] } = { strata: [], llama: [] };
  const loads: number[] = [];
  try {
    for (const spec of specs) {
      log(`starting ${spec.name}: ${spec.command} ${spec.args.join(' ')}`);
      servers.push(await ServerProcess.start(spec));
      await modelLoaded({ url: spec.url, model: '' });
    }
    /** The whole conversation so far as Responses input items (llama-server's turns). */
    const items: Array<Record<string, unknown>> = [];
    let previous: string | null = null;
    const common = { model: 'bench', instructions: INSTRUCTIONS, max_output_tokens: outputTokens, temperature: 0 };
    // A first request on each, so turn 1 does not pay a cold start (first graphs, page faults).
    for (const t of [strata, llama]) await respond(t, { ...common, input: 'Warm up.', max_output_tokens: 4, store: false, ...(t === llama ? banBias(banned) : {}) });
    for (let k = 0; k < turns; k++) {
      const user = { type: 'message', role: 'user', content: userText(k, pasteLines) };
      const measured = async (t: Target, body: Record<string, unknown>, prior: Turn[]): Promise<Turn> => {
        const before = await scrapePromptComputed(t);
        const r = await respond(t, body);
        const after = await scrapePromptComputed(t);
        if (before === null || after === null) throw new Error(`${t.url} reports no prompt-token counter`);
        const last = prior.at(-1);
        return { ...r, computed: after - before, added: last ? r.inputTokens - last.inputTokens - last.outputTokens : r.inputTokens };
      };
      const a = await measured(strata, { ...common, input: [user], ...(previous ? { previous_response_id: previous } : {}) }, got.strata);
      previous = a.id;
      got.strata.push(a);
      items.push(user);
      const b = await measured(llama, { ...common, input: items, ...banBias(banned) }, got.llama);
      got.llama.push(b);
      items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: b.text }] });
      loads.push(loadavg()[0]!);
      log(`turn ${k + 1}/${turns}: strata TTFT ${a.ttftMs.toFixed(0)} ms, computed ${a.computed} of ${a.inputTokens}; llama-server TTFT ${b.ttftMs.toFixed(0)} ms, computed ${b.computed} of ${b.inputTokens}`);
    }
  } finally {
    await Promise.allSettled(servers.map((s) => s.stop()));
  }
  const command = `npm run bench:responses -- ${argv.join(' ')}`.trim();
  const md = report(got, { command, startedAt, model, threads, ctx, turns, outputTokens, loads });
  const stamp = startedAt.toISOString().replace(/[-:]/g, '').slice(0, 15);
  writeFileSync(join(outDir, `responses-${stamp}.json`), `${JSON.stringify({ format: 'strata-bench-responses/1', date: startedAt.toISOString(), command, turns: got }, null, 2)}\n`);
  writeFileSync(join(outDir, 'responses-latest.md'), md);
  process.stdout.write(md);
  return 0;
}

function report(got: { strata: Turn[]; llama: Turn[] }, c: { command: string; startedAt: Date; model: string; threads: number; ctx: number; turns: number; outputTokens: number; loads: number[] }): string {
  const sum = (ts: Turn[], f: (t: Turn) => number) => ts.reduce((s, t) => s + f(t), 0);
  const lines = [
    '# Responses API: previous_response_id (strata) vs the whole conversation each turn (llama-server)', '',
    `${c.startedAt.toISOString()} · \`${c.command}\``, '',
    `Model ${c.model.split('/').pop()}, ${c.threads} threads, one slot of ${c.ctx} tokens each, ${c.turns} turns of up to ${c.outputTokens} output tokens, greedy, streamed, turns alternating; `
      + `${cpus().length} × ${cpus()[0]?.model ?? ''}; load average (1 min) during the turns ${Math.min(...c.loads).toFixed(1)}–${Math.max(...c.loads).toFixed(1)}.`, '',
    '| turn | strata input tokens | strata computed (usage) | strata TTFT ms | llama-server input tokens | llama-server computed (usage) | llama-server TTFT ms | TTFT ours / theirs |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  got.strata.forEach((a, k) => {
    const b = got.llama[k]!;
    lines.push(`| ${k + 1} | ${a.inputTokens} (+${a.added}) | ${a.computed} (${a.inputTokens - a.cachedTokens}) | ${a.ttftMs.toFixed(0)} | ${b.inputTokens} (+${b.added}) | ${b.computed} (${b.inputTokens - b.cachedTokens}) | ${b.ttftMs.toFixed(0)} | ${(a.ttftMs / b.ttftMs).toFixed(2)} |`);
  });
  const later = (ts: Turn[]) => ts.slice(1);
  const ttft = (ts: Turn[]) => percentile(ts.map((t) => t.ttftMs), 50);
  lines.push(
    '', '| all turns | strata | llama-server | ours / theirs |', '|:---|---:|---:|---:|',
    `| prompt tokens computed (server counter) | ${sum(got.strata, (t) => t.computed)} | ${sum(got.llama, (t) => t.computed)} | ${(sum(got.strata, (t) => t.computed) / sum(got.llama, (t) => t.computed)).toFixed(3)} |`,
    `| tokens the turns added (minimum) | ${sum(got.strata, (t) => t.added)} | ${sum(got.llama, (t) => t.added)} | |`,
    `| TTFT p50, turns 2–${c.turns}, ms | ${ttft(later(got.strata)).toFixed(0)} | ${ttft(later(got.llama)).toFixed(0)} | ${(ttft(later(got.strata)) / ttft(later(got.llama))).toFixed(3)} |`,
  );
  return `${lines.join('\n')}\n`;
}
