// `npm run bench:compare`: llama-server (built from the same pinned llama.cpp) and `strata serve`
// on the same 0.5b-shaped stand-in model, threads, context per slot, slots and RAM cache budget;
// the scenarios run against both in alternation (run r: A then B, run r+1: B then A) so drift
// hits both, and only one server gets requests at a time. Every request of both bans the tokens
// that are not valid UTF-8 alone (utf8-tokens.ts: llama-server's output parser would end those
// answers with HTTP 500). Writes the figures, their ratios, each side's requests (failed, tokens
// delivered) and the conditions.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { optInt, optList, optString, parseArgs, UsageError } from '../../backend/args/args.js';
import { rejectUnknownOptions, runBench } from '../../backend/args/command-usage.js';
import { ratioMarkdown, ratioRows } from './compare.js';
import { freePort } from '../../common/net/free-port.js';
import { ServerProcess, type LaunchSpec } from './launch.js';
import { settingsFromArgs, settingsOptionNames, settingsUsage } from '../../backend/bench/options.js';
import { buildReport, notesOf } from '../../backend/bench/report.js';
import { parseScenarios, prepare, runOnce, summarize, tallies } from '../../backend/bench/runner.js';
import type { RunRecord } from '../../contract/bench.js';
import { invalidUtf8TokensOf } from '../../backend/bench/utf8-tokens.js';
import type { BenchContext } from '../../backend/bench/types.js';
import type { ScenarioName } from '../../contract/bench.js';
import { scenarios } from '../../backend/bench/scenarios/index.js';

const usage = `usage: npm run bench:compare [-- options]

  --scenarios A,B   ${Object.keys(scenarios).join(',')}
                    (default: all)
  --runs N          runs per scenario and server (default 3)
  --threads T       threads for both servers (default: all cores)
  --slots N         slots for both servers (default 4)
  --ctx N           context per slot (default 4608; llama-server gets -c ctx*slots). 4608 keeps a
                    2-core run with --runs 3 near 15 min: prefill 8192 is skipped and the mixed
                    scenario's long prompt is capped near 4.5K (both said in the notes);
                    --ctx 9216 measures the full 8K set (about half as long again)
  --batch N         llama-server -b (default 512)
  --cache-mib N     RAM for cached conversations, both servers (llama-server --cache-ram; default 2048)
  --ours-args "..." more flags for strata serve (e.g. "--fim-order psm --infill-delay-ms 0")
  --model FILE      GGUF to serve (default: the 0.5b stand-in, made once and cached)
  --quant Q         weight type of the stand-in: f16 (default), q8_0, q4_0, f32
  --ours KIND       strata (default) or llama-server (a second llama-server, to test the harness)
  --spec MODE       speculative decoding on both servers: none (default), ngram (strata --spec ngram,
                    llama-server --spec-type ngram-simple), draft (a draft model: --draft-model) or mtp
                    (the model's own MTP head: strata --spec mtp, llama-server --spec-type draft-mtp);
                    ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache: llama.cpp's n-gram drafter of
                    that name on both (strata --spec-ngram-kind), at most --draft-max tokens a step;
                    auto: each server's default (strata --spec auto: n-gram drafts for infill, the
                    model's MTP head when it has one; llama-server: none)
  --draft-model F   the draft model for --spec draft (default: the served model itself, so drafts are
                    always accepted: the mechanism's ceiling on random weights)
  --draft-max N     draft tokens per step on both servers (default 8)
  --out DIR         where the JSON and markdown go (default test-output/bench)

${settingsUsage}
`;

interface Side {
  name: string;
  spec: LaunchSpec;
  server: ServerProcess | null;
  ctx: BenchContext | null;
  records: RunRecord[];
}

function log(m: string): void {
  process.stderr.write(`[compare] ${m}\n`);
}

/** llama-server from the pinned source, built (or found) by scripts/build-native.mjs. */
export function llamaServerBinary(root: string): string {
  log('llama-server: build it from the pinned source, or find it in the cache (the first build takes ~20 minutes on 2 cores; CMake shows its progress below)');
  const out = execFileSync(process.execPath, [join(root, 'scripts', 'build-native.mjs'), '--target', 'llama-server'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const bin = out.trim().split('\n').pop() ?? '';
  if (!existsSync(bin)) throw new Error(`build-native did not produce llama-server (got '${bin}')`);
  return bin;
}

/** The 0.5b-shaped stand-in (random weights, Qwen2-0.5B shapes, qwen2 vocabulary), made once and cached. */
async function standInModel(quant: string): Promise<string> {
  const { ensureModel, TEST_MODEL_QUANTS } = await import('../../backend/models/stand-in.js');
  if (!TEST_MODEL_QUANTS.includes(quant as never)) throw new UsageError(`--quant must be one of ${TEST_MODEL_QUANTS.join(', ')}, got '${quant}'`);
  log(`0.5b stand-in model (Qwen2.5-Coder-0.5B shapes and tokenizer, ${quant}): made once, then cached`);
  return ensureModel({ vocab: 'qwen2.5-coder', shape: '0.5b', quant: quant as (typeof TEST_MODEL_QUANTS)[number], seed: 1 });
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

export function main(argv: string[], root: string): Promise<number> {
  return runBench('compare', usage, () => compare(argv, root));
}

const OPTIONS = [
  'scenarios', 'runs', 'threads', 'slots', 'ctx', 'batch', 'cache-mib', 'ours-args', 'model', 'quant', 'ours', 'out',
  'spec', 'draft-model', 'draft-max', 'help', ...settingsOptionNames,
];

/** Each server's flags for one speculative mode (the same draft length on both). */
function specArgs(mode: string, draftModel: string, draftMax: number): { ours: string[]; theirs: string[] } {
  if (mode === 'ngram') {
    return {
      ours: ['--spec', 'ngram', '--draft-max', String(draftMax)],
      theirs: ['--spec-type', 'ngram-simple', '--spec-ngram-simple-size-n', '3', '--spec-ngram-simple-size-m', String(draftMax)],
    };
  }
  // llama.cpp's own n-gram drafters on both (strata --spec-ngram-kind), each drafting at most draftMax.
  const kind = /^ngram-(simple|map-k|map-k4v|mod|cache)$/.exec(mode)?.[1];
  if (kind) {
    // strata drafts a kind's m-grams of draftMax tokens (ngram-simple: at least its 12-token key,
    // cut to draftMax; ngram-mod: from draftMax up); llama-server is told the same.
    const n = String(draftMax);
    const sizes = kind === 'cache' ? [] : kind === 'mod'
      ? ['--spec-ngram-mod-n-max', n, '--spec-ngram-mod-n-min', String(Math.min(48, draftMax))]
      : [`--spec-${mode}-size-m`, kind === 'simple' ? String(Math.max(12, draftMax)) : n];
    return { ours: ['--spec', 'ngram', '--spec-ngram-kind', kind, '--draft-max', n], theirs: ['--spec-type', mode, ...sizes] };
  }
  if (mode === 'draft') {
    return {
      ours: ['--spec', 'draft', '--draft-model', draftModel, '--draft-max', String(draftMax), '--draft-p-min', '0'],
      theirs: ['--spec-type', 'draft-simple', '--spec-draft-model', draftModel, '--spec-draft-n-max', String(draftMax), '--spec-draft-p-min', '0'],
    };
  }
  if (mode === 'mtp') {
    // The model's own MTP head (its GGUF has one), strata's default p-min on both.
    return {
      ours: ['--spec', 'mtp', '--draft-max', String(draftMax), '--draft-p-min', '0.5'],
      theirs: ['--spec-type', 'draft-mtp', '--spec-draft-n-max', String(draftMax), '--spec-draft-p-min', '0.5'],
    };
  }
  if (mode === 'auto') return { ours: ['--spec', 'auto', '--draft-max', String(draftMax)], theirs: [] };
  if (mode !== 'none') throw new UsageError(`--spec must be none, auto, ngram, ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache, draft or mtp, got '${mode}'`);
  // strata drafts with a model's MTP head unless told not to; llama-server only when asked.
  return { ours: ['--spec', 'none'], theirs: [] };
}

async function compare(argv: string[], root: string): Promise<number> {
  const args = parseArgs(argv);
  if (args.options.has('help')) { process.stdout.write(usage); return 0; }
  rejectUnknownOptions(args, OPTIONS);
  let names: ScenarioName[];
  try { names = parseScenarios(optList(args, 'scenarios')); } catch (e) { throw new UsageError((e as Error).message); }
  const runs = optInt(args, 'runs', 1, 100) ?? 3;
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const slots = optInt(args, 'slots', 1, 256) ?? 4;
  const ctxPerSlot = optInt(args, 'ctx', 256, 1 << 22) ?? 4608;
  const batch = optInt(args, 'batch', 1, 1 << 16) ?? 512;
  const cacheMib = optInt(args, 'cache-mib', 0, 1 << 20) ?? 2048;
  const oursExtra = (optString(args, 'ours-args') ?? '').split(/\s+/).filter(Boolean);
  const ours = optString(args, 'ours') ?? 'strata';
  if (ours !== 'strata' && ours !== 'llama-server') throw new UsageError(`--ours must be strata or llama-server, got '${ours}'`);
  const outDir = resolve(root, optString(args, 'out') ?? join('test-output', 'bench'));
  const settings = settingsFromArgs(args);
  mkdirSync(outDir, { recursive: true });

  const bin = llamaServerBinary(root);
  const model = optString(args, 'model') ?? await standInModel(optString(args, 'quant') ?? 'f16');
  if (!existsSync(model)) throw new UsageError(`--model: no such file: ${model}`);
  const bannedTokens = await invalidUtf8TokensOf(model);
  log(bannedTokens === null
    ? 'the model\'s tokenizer is not byte-level BPE or SentencePiece: no tokens banned (llama-server may end answers with HTTP 500)'
    : `every request bans the model's ${bannedTokens.length} tokens that are not valid UTF-8 alone (logit_bias false)`);
  const startedAt = new Date();
  // Saved sessions and slot files of this comparison only; removed at the end.
  const scratch = join(outDir, `scratch-${process.pid}`);
  mkdirSync(join(scratch, 'slots'), { recursive: true });
  const draftModel = optString(args, 'draft-model') ?? model;
  if (!existsSync(draftModel)) throw new UsageError(`--draft-model: no such file: ${draftModel}`);
  const spec = specArgs(optString(args, 'spec') ?? 'none', draftModel, optInt(args, 'draft-max', 1, 256) ?? 8);

  const llamaArgs = (port: number) => [
    '-m', model, '--host', '127.0.0.1', '--port', String(port), '-t', String(threads), '-tb', String(threads),
    '-c', String(ctxPerSlot * slots), '-np', String(slots), '-b', String(batch), '--no-webui',
    '--metrics', '--slot-save-path', join(scratch, 'slots'), '--cache-ram', String(cacheMib), ...spec.theirs,
  ];
  const [portA, portB] = [await freePort(), await freePort()];
  const oursSpec: LaunchSpec = ours === 'strata'
    ? {
      name: 'strata', command: process.execPath, url: `http://127.0.0.1:${portA}`, logFile: join(outDir, 'compare-strata.log'),
      args: [join(root, 'dist', 'strata.mjs'), 'serve', '--model', model, '--port', String(portA),
        '--slots', String(slots), '--ctx', String(ctxPerSlot), '--threads', String(threads), '--batch', String(batch),
        '--park-mib', String(cacheMib), '--sessions-dir', join(scratch, 'sessions'), ...spec.ours, ...oursExtra],
    }
    : { name: 'llama-server (as ours)', command: bin, args: llamaArgs(portA), url: `http://127.0.0.1:${portA}`, logFile: join(outDir, 'compare-ours-llama.log') };
  const theirsSpec: LaunchSpec = {
    name: 'llama-server', command: bin, args: llamaArgs(portB), url: `http://127.0.0.1:${portB}`, logFile: join(outDir, 'compare-llama-server.log'),
  };
  const sides: [Side, Side] = [
    { name: oursSpec.name, spec: oursSpec, server: null, ctx: null, records: [] },
    { name: theirsSpec.name, spec: theirsSpec, server: null, ctx: null, records: [] },
  ];
  const salt = randomBytes(6).toString('hex');
  const idle: { run: number; measured: string; idle: string; idleCpuSeconds: number; measuredSeconds: number }[] = [];

  try {
    // llama-server first: its /tokenize sizes the prompts of both (same model, same tokenizer).
    for (const side of [sides[1], sides[0]]) {
      log(`starting ${side.name}: ${side.spec.command} ${side.spec.args.join(' ')}`);
      side.server = await ServerProcess.start(side.spec);
      side.ctx = await prepare({
        url: side.spec.url, settings, salt, progress: (m) => log(`  ${side.name}: ${m}`),
        slots, ctx: ctxPerSlot, bannedTokens, ...(sides[1].ctx ? { sizer: sides[1].ctx.sizer } : {}),
      });
      log(`${side.name} ready at ${side.spec.url} (slots ${side.ctx.info.slots}, ctx/slot ${side.ctx.info.ctxPerSlot}, ignore_eos ${side.ctx.info.ignoreEos})`);
    }

    for (let run = 0; run < runs; run++) {
      const order = run % 2 === 0 ? [sides[0], sides[1]] : [sides[1], sides[0]];
      for (const side of order) {
        const other = side === sides[0] ? sides[1] : sides[0];
        const cpu0 = other.server!.cpuSeconds();
        const t0 = performance.now();
        for (const name of names) {
          log(`run ${run + 1}/${runs} ${side.name}: ${name}`);
          const rec = await runOnce(side.ctx!, name, run);
          if (rec.error) log(`run ${run + 1}/${runs} ${side.name}: ${name} FAILED: ${rec.error}`);
          side.records.push(rec);
          if (!side.server!.running) throw new Error(`${side.name} exited during ${name}; log ${side.spec.logFile}`);
        }
        const idleCpu = other.server!.cpuSeconds() - cpu0;
        idle.push({ run, measured: side.name, idle: other.name, idleCpuSeconds: idleCpu, measuredSeconds: (performance.now() - t0) / 1000 });
        if (idleCpu > 0.02 * (performance.now() - t0) / 1000) log(`warning: idle ${other.name} used ${idleCpu.toFixed(2)} CPU s while ${side.name} was measured`);
      }
    }
  } finally {
    await Promise.allSettled(sides.map((s) => s.server?.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }

  const [a, b] = sides;
  const sumA = summarize(a.records);
  const sumB = summarize(b.records);
  const rows = ratioRows(sumA, sumB, { ours: tallies(a.records), theirs: tallies(b.records) });
  const command = `npm run bench:compare -- ${argv.join(' ')}`.trim();
  const table = ratioMarkdown(rows, { ours: a.name, theirs: b.name });
  const notes = [...notesOf(a.records).map((n) => `${a.name}: ${n}`), ...notesOf(b.records).map((n) => `${b.name}: ${n}`)];
  const conditions = {
    model, modelBytes: statSync(model).size, threads, slots, ctxPerSlot, llamaServerBatch: batch, cacheMib, runs, scenarios: names,
    bannedTokens: bannedTokens?.length ?? 0,
    llamaServer: { binary: bin, args: llamaArgs(0).map((x, i, xs) => (xs[i - 1] === '--port' ? 'PORT' : x)) },
    ours: { kind: ours, command: oursSpec.command, args: oursSpec.args },
    host: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memBytes: totalmem(), loadavgAtEnd: loadavg() },
  };
  const doc = {
    format: 'strata-bench-compare/1', date: startedAt.toISOString(), finishedAt: new Date().toISOString(), command, conditions,
    ratios: rows.map((r) => ({ ...r, ours: r.ours?.median ?? null, theirs: r.theirs?.median ?? null })),
    idleCpu: idle, notes,
    ours: buildReport({ label: a.name, startedAt, url: a.spec.url, info: a.ctx!.info, sizer: a.ctx!.sizer, runs, names, settings, bannedTokens: bannedTokens?.length ?? 0, summary: sumA, records: a.records, cpus: availableParallelism() }),
    theirs: buildReport({ label: b.name, startedAt, url: b.spec.url, info: b.ctx!.info, sizer: b.ctx!.sizer, runs, names, settings, bannedTokens: bannedTokens?.length ?? 0, summary: sumB, records: b.records, cpus: availableParallelism() }),
  };
  const jsonFile = join(outDir, `compare-${stamp(startedAt)}.json`);
  writeFileSync(jsonFile, `${JSON.stringify(doc, null, 2)}\n`);
  const md = [
    `# ${a.name} vs ${b.name}`, '',
    `${startedAt.toISOString()} · \`${command}\``, '',
    `Model ${model.split('/').pop()} (${(conditions.modelBytes / 2 ** 20).toFixed(0)} MiB), ${threads} threads, ${slots} slots, ` +
      `${ctxPerSlot} tokens of context per slot, ${cacheMib} MiB RAM cache each, ${runs} runs each, alternating; ${conditions.host.cpus} × ${conditions.host.cpuModel}; ` +
      `load average at the end ${conditions.host.loadavgAtEnd.map((x) => x.toFixed(2)).join(' / ')}. Requests of both ban the ${conditions.bannedTokens} tokens that are not valid UTF-8 alone.`, '',
    table,
    ...(notes.length > 0 ? ['', 'Notes:', '', ...notes.map((n) => `- ${n}`)] : []),
    '', `Figures: ${jsonFile.replace(`${root}/`, '')}`, '',
  ].join('\n');
  writeFileSync(join(outDir, 'compare-latest.md'), md);
  process.stdout.write(md);
  log(`wrote ${jsonFile} and ${join(outDir, 'compare-latest.md')}`);
  return [...a.records, ...b.records].some((r) => r.error) ? 1 : 0;
}
