// Speculative decoding on the native engine (bench-engine --workload edit): the edit workload (a
// file in the prompt, an answer as long as the file) decoded with drafts off and on, alternating in
// one engine, and llama.cpp's own llama-speculative-simple with the same model, draft and lengths
// beside it. Figures: decode tok/s without and with drafts, the speed-up, drafts verified and the
// share accepted.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DraftKind, EngineEvent, SpeculativeOptions } from '../../native/lib/addon.js';
import { loadAddon, packageRoot } from '../addon/loader.js';
import { codeLines, makeNonce, seededRandom, seedOf } from './prompts.js';

export type SpecMode = 'ngram' | 'draft' | 'mtp';

export interface SpecFigures {
  npl: number;
  plainTps: number;
  specTps: number;
  drafted: number;
  accepted: number;
}

export interface SpecBenchOptions {
  model: string;
  mode: SpecMode;
  /**
   * Draft model (mode draft); the model itself gives the acceptance ceiling. An EAGLE-3 or DFlash
   * drafter is recognised by the engine; draftKind (what it loaded as) picks llama.cpp's type.
   */
  draftModel: string;
  draftKind?: DraftKind | null;
  draftMax: number;
  /** The MTP head's draft cut-off (mode mtp): a draft ends at a token it gives less than this. */
  draftPMin: number;
  threads: number;
  lines: number;
  npl: number[];
  batch: number;
}

/** The edit prompt: a file, then its first line again, so a copying model continues the file. */
export function editPrompt(lines: number, nonce: string): { text: string; file: string } {
  const file = codeLines(seedOf('edit/file'), lines);
  return { text: `${nonce}\n// src/compute.ts\n${file.join('\n')}\n\n// src/compute.ts, reformatted, nothing renamed:\n${file[0]}\n`, file: file.join('\n') };
}

export function speculativeOptions(o: Pick<SpecBenchOptions, 'mode' | 'draftModel' | 'draftMax' | 'draftPMin'>): SpeculativeOptions {
  if (o.mode === 'mtp') return { mtp: 'on', draftMax: o.draftMax, draftPMin: o.draftPMin };
  return o.mode === 'ngram' ? { ngram: true, draftMax: o.draftMax, mtp: 'off' } : { draftModel: o.draftModel, draftMax: o.draftMax, draftPMin: 0, mtp: 'off' };
}

/** llama-speculative-simple's arguments for the same drafting. */
export function llamaSpeculativeArgs(o: Pick<SpecBenchOptions, 'mode' | 'draftModel' | 'draftKind' | 'draftMax' | 'draftPMin'>): string[] {
  if (o.mode === 'mtp') return ['--spec-type', 'draft-mtp', '--spec-draft-n-max', String(o.draftMax), '--spec-draft-p-min', String(o.draftPMin)];
  if (o.mode === 'ngram') return ['--spec-type', 'ngram-simple', '--spec-ngram-simple-size-n', '3', '--spec-ngram-simple-size-m', String(o.draftMax)];
  const type = !o.draftKind || o.draftKind === 'model' ? 'draft-simple' : `draft-${o.draftKind}`;
  return ['--spec-type', type, '--spec-draft-model', o.draftModel, '--spec-draft-n-max', String(o.draftMax), '--spec-draft-p-min', '0'];
}

/** One alternating run: for each npl, npl answers without drafts and npl with; `gen` is the answer length. */
export async function measureSpeculation(o: SpecBenchOptions, run: number): Promise<{ figures: SpecFigures[]; gen: number; draftKind: DraftKind | null }> {
  const { Engine } = loadAddon();
  const waiters = new Map<number, (e: EngineEvent) => void>();
  const maxNpl = Math.max(...o.npl);
  const probe = editPrompt(o.lines, makeNonce(seededRandom(1)));
  const engine = await Engine.load({
    model: o.model, threads: o.threads, threadsBatch: o.threads, slots: maxNpl, batch: o.batch, ubatch: Math.min(o.batch, 512),
    ctx: 4096, parkBudgetMiB: 0, speculative: speculativeOptions(o),
    onEvents: (events) => { for (const e of events) waiters.get(e.id)?.(e); },
  });
  let nextId = 1;
  try {
    const fileTokens = engine.tokenize(probe.file, false, false).length;
    const gen = Math.min(fileTokens, Math.floor((engine.info.ctx - engine.tokenize(probe.text).length) * 0.9));
    const side = async (npl: number, drafts: boolean, tag: string) => {
      let firstAll = 0;
      let firsts = 0;
      const t0 = performance.now();
      const ends = Array.from({ length: npl }, (_, i) => new Promise<Extract<EngineEvent, { type: 'done' }>>((resolve, reject) => {
        const id = nextId++;
        let first = false;
        waiters.set(id, (e) => {
          if (e.type === 'tokens' && !first) { first = true; if (++firsts === npl) firstAll = performance.now(); }
          if (e.type === 'done') {
            waiters.delete(id);
            if (e.finish !== 'length') reject(new Error(`bench request ended with ${e.finish}: ${e.error ?? ''}`));
            else resolve(e);
          }
        });
        const prompt = editPrompt(o.lines, makeNonce(seededRandom(seedOf(`${tag}/${run}/${npl}/${i}`)))).text;
        engine.submit({ id, prompt: engine.tokenize(prompt), maxTokens: gen, ignoreEos: true, ...(drafts ? {} : { draftMax: 0 }) });
      }));
      const done = await Promise.all(ends);
      const t1 = performance.now();
      const decoded = done.reduce((n, d) => n + d.generated, 0) - npl;
      return {
        tps: decoded / ((t1 - (firstAll || t0)) / 1000),
        drafted: done.reduce((n, d) => n + (d.drafted ?? 0), 0),
        accepted: done.reduce((n, d) => n + (d.accepted ?? 0), 0),
      };
    };
    const out: SpecFigures[] = [];
    for (const npl of o.npl) {
      // Alternate which goes first, so drift on a shared machine hits both.
      const plainFirst = run % 2 === 0;
      const a = plainFirst ? await side(npl, false, 'plain') : null;
      const s = await side(npl, true, 'spec');
      const p = a ?? await side(npl, false, 'plain');
      out.push({ npl, plainTps: p.tps, specTps: s.tps, drafted: s.drafted, accepted: s.accepted });
    }
    return { figures: out, gen, draftKind: engine.info.speculative.draftKind };
  } finally {
    await engine.close();
  }
}

export interface LlamaSpecFigures { tps: number; drafted: number; accepted: number }

/** llama.cpp's llama-speculative-simple on the same kind of prompt (one sequence). */
export function runLlamaSpeculative(o: SpecBenchOptions, gen: number, run: number): LlamaSpecFigures {
  const bin = execFileSync(process.execPath, [join(packageRoot, 'scripts', 'build-native.mjs'), '--target', 'llama-speculative-simple'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
  const dir = mkdtempSync(join(tmpdir(), 'strata-spec-'));
  try {
    const file = join(dir, 'prompt.txt');
    writeFileSync(file, editPrompt(o.lines, makeNonce(seededRandom(seedOf(`llama/${run}`)))).text);
    const spec = llamaSpeculativeArgs(o);
    // It logs its figures to stderr.
    const r = spawnSync(bin, [
      '-m', o.model, '-f', file, '-n', String(gen), '--ignore-eos', '-c', '4096', '-b', String(Math.max(o.batch, 2048)),
      '-t', String(o.threads), '-tb', String(o.threads), '--temp', '0', ...spec,
    ], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`llama-speculative-simple failed (${r.status ?? r.signal}):\n${(r.stderr ?? '').slice(-2000)}`);
    return parseSpeculativeSimple(`${r.stdout}\n${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures llama-speculative-simple logs at its end. */
export function parseSpeculativeSimple(log: string): LlamaSpecFigures {
  const speed = /decoded\s+\d+ tokens in\s+[\d.]+ seconds, speed:\s+([\d.]+) t\/s/.exec(log);
  const drafted = /n_drafted\s*=\s*(\d+)/.exec(log);
  const accepted = /n_accept\s*=\s*(\d+)/.exec(log);
  if (!speed || !drafted || !accepted) throw new Error(`llama-speculative-simple printed no figures:\n${log.slice(-2000)}`);
  return { tps: Number(speed[1]), drafted: Number(drafted[1]), accepted: Number(accepted[1]) };
}
