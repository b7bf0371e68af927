// The CPU probe (bundled to dist/cpu-probe.mjs, run by cpu-path.ts): one short process per
// candidate CPU path. It loads the candidate's CPU variant, a tiny generated q8_0 and q4_0 model
// (ggml has AMX and repacked kernels for both) with or without weight repacking, and reads a
// 64-token prompt, the batch shape on which a mishandled CPU feature kills the process. Exit 0
// after printing {"kind":"ok"} means the path works; a signal or another exit means it does not.
//
//   cpu-probe.mjs '{"list":true}'                          prints {"kind":"variants","variants":[…]}
//   cpu-probe.mjs '{"variant":"zen4","repack":true}'       probes that path
import type { EngineEvent } from '../../native/lib/addon.js';
import { ensureModel } from '../models/stand-in.js';
import { loadAddon } from '../addon/loader.js';
import { PROBE_KILL_ENV } from './cpu-path.js';

const PROMPT_TOKENS = 64;

function report(msg: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

async function probeModel(path: string, variant: string, repack: boolean): Promise<void> {
  const { Engine } = loadAddon();
  let finish: (e: Extract<EngineEvent, { type: 'done' }>) => void = () => {};
  const done = new Promise<Extract<EngineEvent, { type: 'done' }>>((resolve) => { finish = resolve; });
  const engine = await Engine.load({
    model: path, devices: [], slots: 1, ctx: 256, batch: PROMPT_TOKENS, cpuVariant: variant, cpuRepack: repack,
    parkBudgetMiB: 0, onEvents: (events) => { for (const e of events) if (e.type === 'done') finish(e); },
  });
  try {
    const prompt = Array.from({ length: PROMPT_TOKENS }, (_, i) => 100 + i * 7);
    engine.submit({ id: 1, prompt, maxTokens: 2, ignoreEos: true });
    const d = await done;
    if (d.finish === 'error') throw new Error(`decode failed: ${d.error ?? 'unknown error'}`);
  } finally {
    await engine.close();
  }
}

async function main(): Promise<void> {
  const arg = JSON.parse(process.argv[2] ?? '{}') as { list?: boolean; variant?: string; repack?: boolean };
  const addon = loadAddon();
  if (arg.list) {
    report({ kind: 'variants', variants: addon.cpuVariants() });
    report({ kind: 'ok' });
    return;
  }
  const variant = arg.variant ?? 'auto';
  const repack = arg.repack !== false;
  const loaded = addon.loadBackends({ cpuVariant: variant });
  const kill = process.env[PROBE_KILL_ENV];
  if (kill && (kill === loaded.cpuVariant || kill === `${loaded.cpuVariant}:${repack ? 'repack-on' : 'repack-off'}`)) {
    process.kill(process.pid, 'SIGSEGV');
  }
  for (const quant of ['q8_0', 'q4_0'] as const) {
    await probeModel(await ensureModel({ vocab: 'starcoder', shape: 'tiny', quant, seed: 1 }), variant, repack);
  }
  report({ kind: 'ok', variant: loaded.cpuVariant, repack });
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`cpu probe: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
