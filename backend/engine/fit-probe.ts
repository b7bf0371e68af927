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

/** ggml's backend libraries by platform: libggml-NAME.so; NAME.dll with MinGW's "lib" prefix or without (MSVC's). */
const GGML_LIBRARY: Partial<Record<NodeJS.Platform, RegExp>> = { win32: /^(?:lib)?ggml-([a-z]+)\.dll$/i };
const GGML_LIBRARY_POSIX = /^libggml-([a-z]+)\.so$/;

/** The ggml backend libraries among `files` that offload (not the CPU variants, the base library or RPC). */
export function gpuBackendFiles(files: readonly string[], platform: NodeJS.Platform = process.platform): string[] {
  const pattern = GGML_LIBRARY[platform] ?? GGML_LIBRARY_POSIX;
  return files.filter((f) => { const name = pattern.exec(f)?.[1]?.toLowerCase(); return name !== undefined && !['cpu', 'base', 'rpc'].includes(name); });
}

/** ggml backends that offload beside the addon: a build with STRATA_GPU. */
export function builtGpuBackends(platform: NodeJS.Platform = process.platform): string[] {
  const dir = dirname(addonPath());
  if (!existsSync(dir)) return [];
  return gpuBackendFiles(readdirSync(dir), platform);
}
