// Runs the fit probe (fit-probe-child.ts) for one engine configuration: what the model needs per
// device as asked and what each device has free, before the model pool decides what to unload for
// it. The probe loads the addon and the backends as an engine host would, in a short child process.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FitReport } from '../../native/lib/addon.js';
import { addonPath, packageRoot } from '../addon/loader.js';
import type { EngineConfig } from './client.js';

export interface FitProbeOptions {
  /** Default process.execPath (under Electron, ELECTRON_RUN_AS_NODE=1 must be in the env). */
  nodePath?: string;
  /** Default dist/fit-probe.mjs. */
  script?: string;
  timeoutMs?: number;
}

export function probeFit(config: EngineConfig, opts: FitProbeOptions = {}): Promise<FitReport> {
  const script = opts.script ?? join(packageRoot, 'dist', 'fit-probe.mjs');
  const timeoutMs = opts.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const child = spawn(opts.nodePath ?? process.execPath, [script, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let out = '';
    let lastErr = '';
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      const lines = c.split('\n').map((l) => l.trim()).filter(Boolean);
      if (lines.length) lastErr = lines[lines.length - 1]!.slice(0, 500);
    });
    child.on('error', (err) => { clearTimeout(timer); reject(new Error(`cannot start the fit probe: ${err.message}`)); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').reverse().find((l) => l.startsWith('{"kind":"fit"'));
      if (code === 0 && line) { resolve((JSON.parse(line) as { report: FitReport }).report); return; }
      reject(new Error(timedOut ? `the fit probe timed out after ${timeoutMs} ms`
        : `the fit probe ended with ${signal ? `signal ${signal}` : `exit code ${code}`}${lastErr ? `: ${lastErr}` : ''}`));
    });
  });
}

/** ggml backends that offload (not the CPU variants or RPC) beside the addon: a build with STRATA_GPU. */
export function builtGpuBackends(): string[] {
  const dir = dirname(addonPath());
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => /^libggml-[a-z]+\.so$/.test(f) && !/^libggml-(cpu|base|rpc)\.so$/.test(f));
}
