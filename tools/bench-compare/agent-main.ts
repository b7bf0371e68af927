// `npm run bench:agent`: the agent benchmarks, Strata against llama-server (built from the same
// pinned llama.cpp, `--jinja`) on the same model, threads, slots and RAM cache budget:
//   - toolcalls: tool-call validity (tool-validity.ts), tool_choice "auto" with the opener made
//     likely by a logit bias, and "required";
//   - agentkv: scripted agent transcripts interleaved on fewer slots (agent-kv.ts), prompt tokens
//     computed against the minimum.
// The model defaults to the 0.5b stand-in (Qwen2.5-Coder-0.5B shapes and tokenizer, random weights)
// with Qwen2.5-Instruct's chat template written into it, so both servers render tools and calls in
// the Hermes/Qwen format from the same GGUF. Runs alternate the servers (run r: A then B, run r+1:
// B then A); only one server gets requests at a time. Every request bans the tokens that are not
// valid UTF-8 alone (llama-server's output parser ends such answers with HTTP 500).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { optInt, optList, optString, parseArgs, UsageError } from '../../backend/args/args.js';
import { rejectUnknownOptions, runBench } from '../../backend/args/command-usage.js';
import { postJson, type Target } from '../../backend/bench/client.js';
import { invalidUtf8TokensOf } from '../../backend/bench/utf8-tokens.js';
import { freePort } from '../../common/net/free-port.js';
import { agentTranscripts } from './agent-fixture.js';
import { runAgentKv, type AgentKvResult } from './agent-kv.js';
import { llamaServerBinary } from './compare-main.js';
import { ServerProcess, type LaunchSpec } from './launch.js';
import { runToolValidity, validShare, type ValidityCounts } from './tool-validity.js';

const usage = `usage: npm run bench:agent [-- options]

  --benchmarks A,B   toolcalls,agentkv (default: both)
  --runs N           runs per benchmark and server, alternating (default 1)
  --requests N       tool-call validity: requests per tool_choice mode (default 200)
  --opener-bias B    tool-call validity, "auto": logit bias on the opener token (default 100: the
                     answer opens a call at once; lower values let text come first)
  --steps N          agent KV: steps per transcript (default 12; each transcript ends near 8K tokens)
  --transcripts N    agent KV: transcripts interleaved (default 3)
  --result-lines N   agent KV: lines of each tool result (default 34: the last prompt near 8K tokens)
  --calls MODE       agent KV: fixture (every call from the fixture; default) or model (the model's
                     own call, tool_choice "required", carried back with the fixture's result)
  --slots N          slots of both servers (default 2)
  --ctx N            context per slot (default 9216; llama-server gets -c ctx*slots)
  --threads T        threads of both servers (default: all cores)
  --cache-mib N      RAM for cached conversations, both (llama-server --cache-ram; default 2048)
  --model FILE       a GGUF whose chat template renders tools (default: the 0.5b stand-in with
                     Qwen2.5's template, made once and cached)
  --out DIR          where the JSON and markdown go (default test-output/bench)
`;

const OPTIONS = ['benchmarks', 'runs', 'requests', 'opener-bias', 'steps', 'transcripts', 'result-lines', 'calls', 'slots', 'ctx', 'threads', 'cache-mib', 'model', 'out', 'help'];
const BENCHMARKS = ['toolcalls', 'agentkv'] as const;
type Benchmark = (typeof BENCHMARKS)[number];

function log(m: string): void { process.stderr.write(`[bench:agent] ${m}\n`); }

/** The stand-in with a template that renders tools: Qwen2.5-Coder-0.5B's shapes and tokenizer, Qwen2.5-Instruct's template. */
async function toolModel(): Promise<string> {
  const { ensureModel } = await import('../../backend/models/stand-in.js');
  log('0.5b stand-in with Qwen2.5-Instruct\'s chat template (random weights, f16): made once, then cached');
  return ensureModel({ vocab: 'qwen2.5-coder', shape: '0.5b', quant: 'f16', seed: 1, chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' });
}

interface Side { name: string; spec: LaunchSpec; server: ServerProcess | null; target: Target; validity: Record<string, ValidityCounts[]>; kv: AgentKvResult[] }

export function main(argv: string[], root: string): Promise<number> {
  return runBench('agent', usage, () => bench(argv, root));
}

async function bench(argv: string[], root: string): Promise<number> {
  const args = parseArgs(argv);
  if (args.options.has('help')) { process.stdout.write(usage); return 0; }
  rejectUnknownOptions(args, OPTIONS);
  const names = (optList(args, 'benchmarks') ?? [...BENCHMARKS]) as Benchmark[];
  for (const n of names) if (!BENCHMARKS.includes(n)) throw new UsageError(`--benchmarks: unknown '${n}' (${BENCHMARKS.join(', ')})`);
  const runs = optInt(args, 'runs', 1, 100) ?? 1;
  const requests = optInt(args, 'requests', 1, 100_000) ?? 200;
  const openerBias = optInt(args, 'opener-bias', 0, 1000) ?? 100;
  const steps = optInt(args, 'steps', 1, 1000) ?? 12;
  const transcripts = optInt(args, 'transcripts', 1, 64) ?? 3;
  const resultLines = optInt(args, 'result-lines', 1, 100_000) ?? 34;
  const calls = optString(args, 'calls') ?? 'fixture';
  if (calls !== 'fixture' && calls !== 'model') throw new UsageError(`--calls must be fixture or model, got '${calls}'`);
  const slots = optInt(args, 'slots', 1, 256) ?? 2;
  const ctx = optInt(args, 'ctx', 256, 1 << 22) ?? 9216;
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const cacheMib = optInt(args, 'cache-mib', 0, 1 << 20) ?? 2048;
  const outDir = resolve(root, optString(args, 'out') ?? join('test-output', 'bench'));
  mkdirSync(outDir, { recursive: true });

  const bin = llamaServerBinary(root);
  const model = optString(args, 'model') ?? await toolModel();
  if (!existsSync(model)) throw new UsageError(`--model: no such file: ${model}`);
  const banned = await invalidUtf8TokensOf(model);
  const scratch = join(outDir, `scratch-agent-${process.pid}`);
  const [portA, portB] = [await freePort(), await freePort()];
  const sides: [Side, Side] = [
    {
      name: 'strata', server: null, target: { url: `http://127.0.0.1:${portA}`, model: 'bench' }, validity: {}, kv: [],
      spec: {
        name: 'strata', command: process.execPath, url: `http://127.0.0.1:${portA}`, logFile: join(outDir, 'agent-strata.log'),
        args: [join(root, 'dist', 'strata.mjs'), 'serve', '--model', model, '--port', String(portA), '--slots', String(slots), '--ctx', String(ctx),
          '--threads', String(threads), '--park-mib', String(cacheMib), '--sessions-dir', join(scratch, 'sessions')],
      },
    },
    {
      name: 'llama-server', server: null, target: { url: `http://127.0.0.1:${portB}`, model: 'bench' }, validity: {}, kv: [],
      spec: {
        name: 'llama-server', command: bin, url: `http://127.0.0.1:${portB}`, logFile: join(outDir, 'agent-llama-server.log'),
        args: ['-m', model, '--host', '127.0.0.1', '--port', String(portB), '-t', String(threads), '-tb', String(threads), '-c', String(ctx * slots),
          '-np', String(slots), '--jinja', '--no-webui', '--metrics', '--cache-ram', String(cacheMib)],
      },
    },
  ];
  const startedAt = new Date();
  try {
    for (const side of sides) {
      log(`starting ${side.name}: ${side.spec.command} ${side.spec.args.join(' ')}`);
      side.server = await ServerProcess.start(side.spec);
    }
    const opener = await openerToken(sides[1].target);
    for (let run = 0; run < runs; run++) {
      const salt = randomBytes(4).toString('hex');
      for (const side of run % 2 === 0 ? sides : [sides[1], sides[0]]) {
        if (names.includes('toolcalls')) {
          for (const mode of ['auto', 'required'] as const) {
            log(`run ${run + 1}/${runs} ${side.name}: tool-call validity, tool_choice ${mode}, ${requests} requests`);
            const c = await runToolValidity({
              target: side.target, requests, mode, opener: { ...opener, bias: openerBias }, banned, maxTokens: 256, salt,
              onProgress: (n) => { if (n % 20 === 0) log(`  ${side.name} ${mode}: ${n}/${requests}`); },
            });
            (side.validity[mode] ??= []).push(c);
          }
        }
        if (names.includes('agentkv')) {
          log(`run ${run + 1}/${runs} ${side.name}: agent KV, ${transcripts} transcripts x ${steps} steps on ${slots} slots (${calls} calls)`);
          side.kv.push(await runAgentKv({
            target: side.target, transcripts: agentTranscripts(transcripts, steps, resultLines, salt), calls, banned,
            maxTokens: calls === 'model' ? 256 : 4, onProgress: (n, total) => { if (n % transcripts === 0) log(`  ${side.name}: ${n}/${total} requests`); },
          }));
        }
        if (!side.server!.running) throw new Error(`${side.name} exited; log ${side.spec.logFile}`);
      }
    }
  } finally {
    await Promise.allSettled(sides.map((s) => s.server?.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }

  const command = `npm run bench:agent -- ${argv.join(' ')}`.trim();
  const md = report(sides, { command, startedAt, model, threads, slots, ctx, cacheMib, runs, requests, openerBias, steps, transcripts, calls, banned: banned?.length ?? 0 });
  const jsonFile = join(outDir, `agent-${startedAt.toISOString().replace(/[-:]/g, '').slice(0, 15)}.json`);
  writeFileSync(jsonFile, `${JSON.stringify({ format: 'strata-bench-agent/1', date: startedAt.toISOString(), command, sides: sides.map((s) => ({ name: s.name, validity: s.validity, kv: s.kv })) }, null, 2)}\n`);
  writeFileSync(join(outDir, 'agent-latest.md'), md);
  process.stdout.write(md);
  log(`wrote ${jsonFile} and ${join(outDir, 'agent-latest.md')}`);
  return 0;
}

/** `<tool_call>` as one token id (through llama-server's /tokenize with special tokens parsed). */
async function openerToken(t: Target): Promise<{ text: string; id: number }> {
  const text = '<tool_call>';
  const j = await postJson(t, '/tokenize', { content: text, add_special: false, parse_special: true }) as { tokens?: unknown[] };
  if (!Array.isArray(j.tokens) || j.tokens.length !== 1) throw new UsageError(`the model's vocabulary has no single ${text} token; give a Hermes/Qwen-format model`);
  return { text, id: Number(j.tokens[0]) };
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : 'n/a');
const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)]! : Number.NaN; };

function report(sides: [Side, Side], c: Record<string, unknown> & { command: string; startedAt: Date; model: string }): string {
  const [a, b] = sides;
  const lines = [
    '# Agent benchmarks: strata vs llama-server', '',
    `${c.startedAt.toISOString()} · \`${c.command}\``, '',
    `Model ${c.model.split('/').pop()}, ${c.threads} threads, ${c.slots} slots, ${c.ctx} tokens per slot, ${c.cacheMib} MiB RAM cache each, ${c.runs} run(s) each, alternating; ` +
      `${cpus().length} × ${cpus()[0]?.model ?? ''}; load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' / ')}. Every request bans the ${c.banned} tokens that are not valid UTF-8 alone.`, '',
    '| benchmark | figure | strata | llama-server | target |', '|:---|:---|---:|---:|:---|',
  ];
  for (const mode of ['auto', 'required']) {
    if (!a.validity[mode]) continue;
    const row = (s: Side) => {
      const cs = s.validity[mode]!;
      const sum = { requests: 0, calls: 0, valid: 0, malformed: 0, noCall: 0, failures: [] as string[] };
      for (const y of cs) {
        sum.requests += y.requests; sum.calls += y.calls; sum.valid += y.valid; sum.malformed += y.malformed; sum.noCall += y.noCall;
      }
      return { share: validShare(sum), sum };
    };
    const ra = row(a);
    const rb = row(b);
    const detail = (r: ReturnType<typeof row>) => `${pct(r.share)} (${r.sum.valid} of ${r.sum.calls + r.sum.malformed}; ${r.sum.noCall} without a call)`;
    lines.push(`| tool-call validity, tool_choice ${mode}${mode === 'auto' ? ` (opener bias ${c.openerBias})` : ''} | calls that parse and validate | ${detail(ra)} | ${detail(rb)} | 100% on strata |`);
  }
  if (a.kv.length > 0) {
    const ratio = (s: Side) => med(s.kv.map((k) => k.computed / k.minimum));
    const detail = (s: Side) => { const k = s.kv[0]!; return `${ratio(s).toFixed(3)}× (${k.computed} of minimum ${k.minimum}${k.failed ? `; ${k.failed} failed` : ''})`; };
    lines.push(`| agent KV, ${c.transcripts} transcripts × ${c.steps} steps, ${c.calls} calls | prompt tokens computed / minimum | ${detail(a)} | ${detail(b)} | ≤ 1.05× on strata |`);
  }
  const failures = sides.flatMap((s) => [...Object.entries(s.validity).flatMap(([m, cs]) => cs.flatMap((x) => x.failures.map((f) => `${s.name} ${m}: ${f}`))), ...s.kv.flatMap((k) => k.failures.map((f) => `${s.name} agent KV: ${f}`))]);
  if (failures.length > 0) lines.push('', 'Failures (first few):', '', ...failures.slice(0, 20).map((f) => `- ${f.replace(/\n/g, ' ')}`));
  return `${lines.join('\n')}\n`;
}
