// `strata bench-engine` (npm run bench:engine): the native engine beside llama.cpp's own
// llama-batched-bench, same model, threads and batch sizes, in one run, printed as ratios.
// With --vs-addon PATH, --vs-cpu-variant NAME or --vs-cpu-repack on|off the other side is this
// engine built or run another way (the -march=native build, another CPU variant, no repacking):
// each side then runs in its own process, since a process loads one llama.cpp and one variant.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../addon/loader.js';
import { optInt, optList, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { rejectUnknownOptions, runCommand } from '../args/command-usage.js';
import { measureEngine, type BatchFigures } from '../bench/engine-bench.js';
import { runEditBench } from '../bench/engine-spec-report.js';
import { runExactness } from '../bench/exactness.js';

export const command = {
  summary: 'engine prefill/decode tok/s at 1, 4, 8 slots beside llama-batched-bench',
  run: (args: ParsedArgs): Promise<number> => runCommand('bench-engine', USAGE, args, () => benchEngine(args)),
};

const USAGE = `usage: strata bench-engine [options]              (npm run bench:engine -- [options])

  The engine's prefill and decode tok/s beside llama-batched-bench (same model, threads, batch).
  --model FILE          GGUF to run (default: the 0.5b f16 qwen2 stand-in, made on first use)
  --threads N           threads (default: all cores)
  --pp N / --tg N       prompt and generated tokens per sequence (default 256 / 64)
  --batch N             batch and micro-batch size (default 512)
  --npl A,B             slot counts (default 1,4,8)
  --runs N              runs per side, alternated; medians reported (default 3)
  --cpu-variant NAME    ggml CPU variant (default auto: the probe's pick)
  --cpu-repack on|off   repacked weights for the CPU GEMMs (default on)
  --deterministic on|off  batch-invariant CPU math (default off; its cost: docs/benchmarks.md)
  --vs-addon PATH | --vs-cpu-variant NAME | --vs-cpu-repack on|off | --vs-deterministic on|off
                        the other side is this engine built or run that way (not llama.cpp)
  --label / --vs-label  names of the two sides in the table
  --json FILE           figures (default test-output/bench/engine-latest.json)

  --workload edit       drafts off vs on beside llama-speculative-simple:
                        --spec ngram|draft|mtp, --draft-model FILE, --draft-max N, --lines N, --llama off;
                        mtp: the model's own MTP head (default model: the copy-mtp test shape),
                        beside llama-speculative-simple --spec-type draft-mtp; --draft-p-min P (0.5)
  --workload exact      batched == solo on one device: --sets N, --prompts N, --tokens N,
                        --devices A,B, --gpu-layers N, --flash-attn auto|on|off`;

const COMMON = ['workload', 'model', 'threads', 'npl', 'batch', 'runs', 'json', 'help'];
const THROUGHPUT = [...COMMON, 'pp', 'tg', 'cpu-variant', 'cpu-repack', 'deterministic', 'engine-only', 'vs-addon', 'vs-cpu-variant', 'vs-cpu-repack', 'vs-deterministic', 'label', 'vs-label'];
const EDIT = [...COMMON, 'spec', 'draft-model', 'draft-max', 'draft-p-min', 'lines', 'llama'];
const EXACT = [...COMMON, 'devices', 'gpu-layers', 'flash-attn', 'sets', 'prompts', 'tokens'];

async function benchEngine(args: ParsedArgs): Promise<number> {
  const workload = optString(args, 'workload') ?? 'throughput';
  if (workload !== 'throughput' && workload !== 'edit' && workload !== 'exact') throw new UsageError(`--workload must be throughput, edit or exact, got '${workload}'`);
  rejectUnknownOptions(args, workload === 'edit' ? EDIT : workload === 'exact' ? EXACT : THROUGHPUT);
  if (workload === 'edit') return runEditBench(args, standIn, mtpStandIn);
  if (workload === 'exact') return runExactness(args, standIn);
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const pp = optInt(args, 'pp', 1, 65536) ?? 256;
  const tg = optInt(args, 'tg', 2, 65536) ?? 64;
  const batch = optInt(args, 'batch', 1, 65536) ?? 512;
  const npl = (optList(args, 'npl') ?? ['1', '4', '8']).map(Number);
  const runs = optInt(args, 'runs', 1, 100) ?? 3;
  const maxSlots = Math.max(...npl);
  const model = optString(args, 'model') ?? await standIn();
  const ctx = pp + tg + 16;
  const repack = optString(args, 'cpu-repack');
  if (repack !== undefined && repack !== 'on' && repack !== 'off') throw new UsageError('--cpu-repack must be on or off');
  const det = optString(args, 'deterministic');
  if (det !== undefined && det !== 'on' && det !== 'off') throw new UsageError('--deterministic must be on or off');
  const measure = {
    model, threads, pp, tg, batch, npl, ctx, slots: maxSlots,
    cpuVariant: optString(args, 'cpu-variant') ?? 'auto', cpuRepack: repack !== 'off', deterministic: det === 'on',
  };
  if (args.options.has('engine-only')) {
    process.stdout.write(`${JSON.stringify(await measureEngine(measure))}\n`);
    return 0;
  }
  const vs = { addon: optString(args, 'vs-addon'), variant: optString(args, 'vs-cpu-variant'), repack: optString(args, 'vs-cpu-repack'), det: optString(args, 'vs-deterministic') };
  const versus = vs.addon !== undefined || vs.variant !== undefined || vs.repack !== undefined || vs.det !== undefined;
  const describe = (addon?: string, variant?: string, rep?: string, d?: string) => [addon ?? 'this build', variant && `variant ${variant}`, rep && `repack ${rep}`, d && `deterministic ${d}`].filter(Boolean).join(', ');
  const ourLabel = versus ? optString(args, 'label') ?? describe(undefined, optString(args, 'cpu-variant'), repack, det) : 'strata';
  const theirLabel = versus ? optString(args, 'vs-label') ?? describe(vs.addon, vs.variant ?? optString(args, 'cpu-variant'), vs.repack ?? repack, vs.det ?? det) : 'llama-batched-bench';
  const theirSide = (): BatchFigures[] => engineInChild(args, vs.addon ?? process.env.STRATA_ADDON, {
    'cpu-variant': vs.variant ?? optString(args, 'cpu-variant'), 'cpu-repack': vs.repack ?? repack, deterministic: vs.det ?? det,
  });
  const ourSide = (): BatchFigures[] => engineInChild(args, process.env.STRATA_ADDON, {});
  process.stderr.write(`model ${model}\nthreads ${threads}, pp ${pp}, tg ${tg}, batch ${batch}, npl ${npl.join(',')}, runs ${runs}\n`);

  // Alternate the two sides run by run so drift on a shared machine hits both; report medians.
  const theirRuns: BatchFigures[][] = [];
  const ourRuns: BatchFigures[][] = [];
  for (let r = 1; r <= runs; r++) {
    process.stderr.write(`run ${r}/${runs}: ${theirLabel} …\n`);
    theirRuns.push(versus ? theirSide() : runBatchedBench({ ...measure, ctx: ctx * maxSlots }));
    process.stderr.write(`run ${r}/${runs}: ${ourLabel} …\n`);
    ourRuns.push(versus ? ourSide() : await measureEngine(measure));
  }
  const theirs = medianFigures(theirRuns, npl);
  const ours = medianFigures(ourRuns, npl);

  const rows = npl.map((n) => {
    const a = ours.find((r) => r.npl === n)!;
    const b = theirs.find((r) => r.npl === n)!;
    return { npl: n, ours: a, theirs: b, prefillRatio: a.prefillTps / b.prefillTps, decodeRatio: a.decodeTps / b.decodeTps };
  });
  const lines = [
    `| slots | prefill tok/s ${ourLabel} | ${theirLabel} | ratio | decode tok/s ${ourLabel} | ${theirLabel} | ratio |`,
    `|---:|---:|---:|---:|---:|---:|---:|`,
    ...rows.map((r) => `| ${r.npl} | ${r.ours.prefillTps.toFixed(1)} | ${r.theirs.prefillTps.toFixed(1)} | ${r.prefillRatio.toFixed(3)} | ${r.ours.decodeTps.toFixed(1)} | ${r.theirs.decodeTps.toFixed(1)} | ${r.decodeRatio.toFixed(3)} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const out = optString(args, 'json') ?? join(packageRoot, 'test-output', 'bench', 'engine-latest.json');
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), model, threads, pp, tg, batch, runs, ours: ourLabel, theirs: theirLabel, rows, ourRuns, theirRuns }, null, 2));
  process.stderr.write(`wrote ${out}\n`);
  return 0;
}

const SIDE_OPTIONS = ['vs-addon', 'vs-cpu-variant', 'vs-cpu-repack', 'vs-deterministic', 'label', 'vs-label', 'runs', 'json'];

/** One engine measurement in a child process with `addon` (undefined: the default build) and option overrides. */
function engineInChild(args: ParsedArgs, addon: string | undefined, over: Record<string, string | undefined>): BatchFigures[] {
  const options = new Map([...args.options].filter(([k]) => !SIDE_OPTIONS.includes(k)));
  for (const [k, v] of Object.entries(over)) if (v !== undefined) options.set(k, v);
  const passed = [...options].flatMap(([k, v]) => [`--${k}`, v]);
  const env = { ...process.env };
  if (addon) env.STRATA_ADDON = addon; else delete env.STRATA_ADDON;
  const out = execFileSync(process.execPath, [join(packageRoot, 'dist', 'strata.mjs'), 'bench-engine', ...passed, '--engine-only', 'true'],
    { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 << 20 });
  return JSON.parse(out.trim().split('\n').pop()!) as BatchFigures[];
}

function medianFigures(runs: BatchFigures[][], npl: number[]): BatchFigures[] {
  const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };
  return npl.map((n) => {
    const rows = runs.map((r) => r.find((x) => x.npl === n)!);
    return { npl: n, prefillTps: med(rows.map((x) => x.prefillTps)), decodeTps: med(rows.map((x) => x.decodeTps)) };
  });
}

/**
 * The model with an MTP head (`--spec mtp` without --model): copy-mtp, whose head copies one token
 * ahead of its trunk, in f16 (a decode reads its weights, so a verified batch costs little more than
 * one token) with a 32K vocabulary, so that the head (one layer and the output projection) costs
 * against 24 layers what a real model's does against dozens.
 */
async function mtpStandIn(): Promise<string> {
  const { ensureModel } = await import('../models/stand-in.js');
  return ensureModel({ vocab: 'llama-spm', shape: 'copy-mtp', quant: 'f16', seed: 1 });
}

async function standIn(): Promise<string> {
  const { ensureModel } = await import('../models/stand-in.js');
  return ensureModel({ vocab: 'qwen2', shape: '0.5b', quant: 'f16', seed: 1 });
}

function runBatchedBench(o: { model: string; threads: number; pp: number; tg: number; batch: number; npl: number[]; ctx: number }): BatchFigures[] {
  const bin = execFileSync(process.execPath, [join(packageRoot, 'scripts', 'build-native.mjs'), '--target', 'llama-batched-bench'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
  const out = execFileSync(bin, [
    '-m', o.model, '-c', String(o.ctx), '-b', String(o.batch), '-ub', String(o.batch),
    '-npp', String(o.pp), '-ntg', String(o.tg), '-npl', o.npl.join(','),
    '-t', String(o.threads), '-tb', String(o.threads), '--output-format', 'jsonl',
  ], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  return out.split('\n').filter((l) => l.startsWith('{')).map((l) => {
    const j = JSON.parse(l) as { pl: number; speed_pp: number; speed_tg: number };
    return { npl: j.pl, prefillTps: j.speed_pp, decodeTps: j.speed_tg };
  });
}
