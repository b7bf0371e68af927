// The CPU path an engine runs: which of ggml's CPU variant libraries it loads and whether weights
// are repacked into ggml's extra buffer types (AMX tiles, wider SIMD layouts). A kernel that
// mishandles a CPU feature kills the process on the first prompt, so each candidate is first run
// in a short child process (cpu-probe-child.ts: load a tiny quantized model, decode a 64-token
// batch); the first candidate that survives is used. Verdicts are cached per machine and build.
//
// Order tried: every variant that suits the CPU, best score first, with repacking; then the same
// without repacking. A variant or repack setting given by the user narrows the list.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, join } from 'node:path';
import type { CpuVariant } from '../../native/lib/addon.js';
import { strataCacheDir } from '../../common/hub/cache-dir.js';
import { addonPath, packageRoot } from '../addon/loader.js';
import { describeExit } from '../../common/os/process.js';

export type RepackSetting = 'auto' | 'on' | 'off';

export interface CpuPathRequest {
  /** 'auto' or a variant name ("haswell", "zen4", …). */
  variant: string;
  repack: RepackSetting;
}

export interface ProbeVerdict {
  /** null in a build without variants. */
  variant: string | null;
  repack: boolean;
  ok: boolean;
  /** Why it failed ("signal SIGSEGV", "exit code 1: …", "timed out after 120000 ms"); null when ok. */
  reason: string | null;
  ms: number;
}

export interface CpuPath {
  variant: string | null;
  repack: boolean;
  /** Why the engine does not run the first choice, or that the user chose; null when it does. */
  note: string | null;
  /** Every candidate looked at, in order, up to the one chosen (cached verdicts included). */
  probes: ProbeVerdict[];
  /** Variants of this build, best first (empty without variants). */
  variants: CpuVariant[];
}

export interface CpuPathOptions {
  log: (line: string, level: 'info' | 'warn' | 'error') => void;
  /** Default process.execPath (under Electron, ELECTRON_RUN_AS_NODE=1 must be in the env). */
  nodePath?: string;
  /** Default dist/cpu-probe.mjs. */
  probeScript?: string;
  /** Default <cache>/cpu-probe. */
  cacheDir?: string;
  timeoutMs?: number;
}

/** Test-only: the probe child kills itself with SIGSEGV when probing this variant ("name" or "name:repack-off"). */
export const PROBE_KILL_ENV = 'STRATA_TEST_PROBE_KILL';

interface ProbeCache {
  variants: CpuVariant[] | null;
  verdicts: Record<string, ProbeVerdict>;
}

const verdictKey = (variant: string | null, repack: boolean): string => `${variant ?? 'native'}|${repack ? 'repack' : 'plain'}`;
const describe = (variant: string | null, repack: boolean): string =>
  `${variant ?? 'native build'} (repack ${repack ? 'on' : 'off'})`;

/** Machine + build + test switch: a verdict holds only for the same CPU, kernel and libraries. */
function cacheKey(): string {
  const h = createHash('sha256');
  let cpu = '';
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const first = info.split('\n\n')[0] ?? '';
    cpu = first.split('\n').filter((l) => /^(vendor_id|model name|flags)\s*:/.test(l)).join('\n');
  } catch {
    cpu = cpus()[0]?.model ?? ''; // not Linux (Windows): the CPU's name; the build identity keys it too
  }
  h.update(cpu).update('\0').update(release()).update('\0');
  const addon = addonPath();
  const manifest = join(dirname(addon), 'build-manifest.json');
  for (const f of [addon, manifest]) {
    try {
      const st = statSync(f);
      h.update(`${f}:${st.size}:${st.mtimeMs}\0`);
    } catch { h.update(`${f}:missing\0`); }
  }
  h.update(process.env[PROBE_KILL_ENV] ?? '');
  return h.digest('hex').slice(0, 16);
}

function readCache(path: string): ProbeCache {
  try {
    const c = JSON.parse(readFileSync(path, 'utf8')) as ProbeCache;
    if (c && typeof c.verdicts === 'object') return c;
  } catch { /* none yet, or damaged: probe again */ }
  return { variants: null, verdicts: {} };
}

function writeCache(path: string, c: ProbeCache): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(c, null, 2));
  renameSync(tmp, path);
}

interface ChildResult { ok: boolean; reason: string | null; ms: number; variants: CpuVariant[] | null }

/** Runs the probe child with `arg`; never throws (a child that cannot start is a failure). */
function runChild(arg: Record<string, unknown>, opts: CpuPathOptions): Promise<ChildResult> {
  const script = opts.probeScript ?? join(packageRoot, 'dist', 'cpu-probe.mjs');
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const started = Date.now();
  return new Promise((resolve) => {
    let variants: CpuVariant[] | null = null;
    let ok = false;
    let lastErr = '';
    let timedOut = false;
    const child = spawn(opts.nodePath ?? process.execPath, [script, JSON.stringify(arg)], {
      stdio: ['ignore', 'pipe', 'pipe'], env: process.env,
    });
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      let i: number;
      while ((i = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, i);
        out = out.slice(i + 1);
        try {
          const msg = JSON.parse(line) as { kind: string; variants?: CpuVariant[] };
          if (msg.kind === 'variants' && msg.variants) variants = msg.variants;
          if (msg.kind === 'ok') ok = true;
        } catch { /* a log line, not a report */ }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = chunk.split('\n').map((l) => l.trim()).filter(Boolean);
      if (lines.length) lastErr = lines[lines.length - 1]!.slice(0, 300);
    });
    const finish = (reason: string | null): void => {
      clearTimeout(timer);
      resolve({ ok: reason === null, reason, ms: Date.now() - started, variants });
    };
    child.on('error', (err) => finish(`cannot start the probe (${err.message})`));
    child.on('close', (code, signal) => {
      if (timedOut) finish(`timed out after ${timeoutMs} ms`);
      else if (code === 0 && ok) finish(null);
      else if (signal) finish(`signal ${signal}`);
      else finish(`exit ${describeExit(code, null)}${lastErr ? `: ${lastErr}` : ''}`);
    });
  });
}

/** Candidates in the order they are tried. */
function candidates(req: CpuPathRequest, variants: CpuVariant[]): Array<{ variant: string | null; repack: boolean }> {
  const names: Array<string | null> = variants.length === 0 ? [null]
    : req.variant === 'auto' ? variants.filter((v) => v.score > 0).map((v) => v.name) : [req.variant];
  const repacks = req.repack === 'auto' ? [true, false] : [req.repack === 'on'];
  return repacks.flatMap((repack) => names.map((variant) => ({ variant, repack })));
}

/**
 * Resolves the CPU path for this machine, probing candidates that have no cached verdict.
 * Throws when no candidate survives its probe (the message lists each and why).
 */
export async function resolveCpuPath(req: CpuPathRequest, opts: CpuPathOptions): Promise<CpuPath> {
  if (req.variant !== 'auto' && req.repack !== 'auto') {
    return {
      variant: req.variant, repack: req.repack === 'on', probes: [], variants: [],
      note: `set by --cpu-variant ${req.variant} --cpu-repack ${req.repack} (not probed)`,
    };
  }
  const cachePath = join(opts.cacheDir ?? join(strataCacheDir(), 'cpu-probe'), `${cacheKey()}.json`);
  const cache = readCache(cachePath);
  if (cache.variants === null) {
    const listed = await runChild({ list: true }, opts);
    if (!listed.ok || listed.variants === null) {
      throw new Error(`cpu path: cannot list the CPU variants of this build (${listed.reason ?? 'no report'})`);
    }
    cache.variants = listed.variants;
    writeCache(cachePath, cache);
  }
  const variants = cache.variants;
  const list = candidates(req, variants);
  if (list.length === 0) throw new Error('cpu path: no CPU variant of this build suits this CPU');
  const probes: ProbeVerdict[] = [];
  for (const c of list) {
    const key = verdictKey(c.variant, c.repack);
    let v = cache.verdicts[key];
    if (!v) {
      opts.log(`cpu path: probing ${describe(c.variant, c.repack)} in a child process (once per machine and build)`, 'info');
      const r = await runChild({ variant: c.variant ?? 'auto', repack: c.repack }, opts);
      v = { variant: c.variant, repack: c.repack, ok: r.ok, reason: r.reason, ms: r.ms };
      cache.verdicts[key] = v;
      writeCache(cachePath, cache);
    }
    probes.push(v);
    if (!v.ok) continue;
    const first = list[0]!;
    const note = c === first ? null
      : `${describe(first.variant, first.repack)} failed its probe (${probes[0]!.reason}); using ${describe(c.variant, c.repack)}`;
    if (note) opts.log(`cpu path: ${note}`, 'warn');
    return { variant: c.variant, repack: c.repack, note, probes, variants };
  }
  throw new Error(`cpu path: every candidate failed its probe: ${probes.map((p) => `${describe(p.variant, p.repack)}: ${p.reason}`).join('; ')}`);
}

/** One resolution per process, shared by every replica (the verdicts are per machine anyway). */
export function memoCpuPath(req: CpuPathRequest, opts: CpuPathOptions): () => Promise<CpuPath> {
  let p: Promise<CpuPath> | null = null;
  return () => {
    p ??= resolveCpuPath(req, opts);
    p.catch(() => { p = null; });
    return p;
  };
}
