// `strata bench-engine --workload edit`: runs engine-spec-bench.ts (alternating runs, medians)
// and prints drafts off vs on beside llama-speculative-simple, writing the figures as JSON.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { optInt, optList, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { packageRoot } from '../addon/loader.js';
import { measureSpeculation, runLlamaSpeculative, type LlamaSpecFigures, type SpecFigures, type SpecMode } from './engine-spec-bench.js';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function runEditBench(args: ParsedArgs, standIn: () => Promise<string>, mtpStandIn: () => Promise<string>): Promise<number> {
  const mode = (optString(args, 'spec') ?? 'draft') as SpecMode;
  if (mode !== 'ngram' && mode !== 'draft' && mode !== 'mtp') throw new UsageError(`--spec must be ngram, draft or mtp, got '${mode}'`);
  const model = optString(args, 'model') ?? await (mode === 'mtp' ? mtpStandIn() : standIn());
  const pMin = optString(args, 'draft-p-min');
  const draftPMin = pMin === undefined ? 0.5 : Number(pMin);
  if (!(draftPMin >= 0 && draftPMin <= 1)) throw new UsageError(`--draft-p-min must be a number from 0 to 1, got '${pMin}'`);
  const o = {
    model, mode, draftModel: optString(args, 'draft-model') ?? model, draftMax: optInt(args, 'draft-max', 1, 256) ?? 8, draftPMin,
    threads: optInt(args, 'threads', 1, 1024) ?? availableParallelism(), lines: optInt(args, 'lines', 1, 2000) ?? 40,
    npl: (optList(args, 'npl') ?? ['1', '4']).map(Number), batch: optInt(args, 'batch', 1, 65536) ?? 512,
  };
  const runs = optInt(args, 'runs', 1, 100) ?? 3;
  const withLlama = optString(args, 'llama') !== 'off';
  process.stderr.write(`model ${model}\nspec ${mode}${mode === 'draft' ? ` (draft ${o.draftModel})` : mode === 'mtp' ? ` (p-min ${draftPMin})` : ''}, draft max ${o.draftMax}, ${o.lines} lines, npl ${o.npl.join(',')}, threads ${o.threads}, runs ${runs}\n`);
  const ours: SpecFigures[][] = [];
  const theirs: LlamaSpecFigures[] = [];
  for (let r = 0; r < runs; r++) {
    process.stderr.write(`run ${r + 1}/${runs}: strata engine, drafts off and on …\n`);
    const m = await measureSpeculation(o, r);
    ours.push(m.figures);
    if (withLlama) {
      process.stderr.write(`run ${r + 1}/${runs}: llama-speculative-simple (1 sequence, ${m.gen} tokens) …\n`);
      theirs.push(runLlamaSpeculative({ ...o, draftKind: m.draftKind }, m.gen, r));
    }
  }
  const rows = o.npl.map((npl) => {
    const all = ours.map((run) => run.find((f) => f.npl === npl)!);
    const plain = median(all.map((f) => f.plainTps));
    const spec = median(all.map((f) => f.specTps));
    const drafted = all.reduce((n, f) => n + f.drafted, 0);
    const accepted = all.reduce((n, f) => n + f.accepted, 0);
    return { npl, plain, spec, speedup: spec / plain, drafted, acceptance: drafted > 0 ? accepted / drafted : null };
  });
  const llama = theirs.length > 0 ? {
    tps: median(theirs.map((t) => t.tps)),
    acceptance: theirs.reduce((n, t) => n + t.drafted, 0) > 0 ? theirs.reduce((n, t) => n + t.accepted, 0) / theirs.reduce((n, t) => n + t.drafted, 0) : null,
  } : null;
  const pct = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);
  const lines = [
    `| slots | decode tok/s, no drafts | with drafts | speed-up | drafts verified | accepted | llama-speculative-simple tok/s | accepted | ours / theirs |`,
    `|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...rows.map((r) => {
      const l = r.npl === 1 && llama ? [llama.tps.toFixed(1), pct(llama.acceptance), (r.spec / llama.tps).toFixed(3)] : ['–', '–', '–'];
      return `| ${r.npl} | ${r.plain.toFixed(1)} | ${r.spec.toFixed(1)} | ${r.speedup.toFixed(3)} | ${r.drafted} | ${pct(r.acceptance)} | ${l.join(' | ')} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const out = optString(args, 'json') ?? join(packageRoot, 'test-output', 'bench', 'engine-edit-latest.json');
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), options: o, runs, rows, llama, ours, theirs }, null, 2));
  process.stderr.write(`wrote ${out}\n`);
  return 0;
}
