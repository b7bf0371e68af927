// `strata gpu list|install|remove`: GPU packages, the prebuilt ggml backends (Vulkan, CUDA 13, CUDA 12) of the
// pinned node-llama-cpp release, installed into the user cache where the server and
// `strata devices` find them. --json prints machine-readable lines (the extension reads them).
import { installBackend, installedBackend, removeBackend, type InstallProgress } from '../gpu-backends/install.js';
import { GPU_BACKEND_KINDS, isGpuBackendKind, PIN, type GpuBackendKind } from '../gpu-backends/pin.js';
import { backendsReport, type BackendsReport } from '../gpu-backends/report.js';
import { describeLoadFailure } from '../gpu-backends/readiness.js';
import { loadAddon } from '../addon/loader.js';
import { optString, UsageError, type ParsedArgs } from '../args/args.js';
import { optFlag, rejectUnknownOptions, runCommand } from '../args/command-usage.js';

const USAGE = `usage: strata gpu list [--json]
       strata gpu install ${GPU_BACKEND_KINDS.join('|')} [--registry URL] [--via auto|npm|https] [--json]
       strata gpu remove ${GPU_BACKEND_KINDS.join('|')}
  list      installed GPU backends, what this machine can run (Vulkan loader and drivers, NVIDIA
            driver, CUDA runtime and cuBLAS), and the devices the engine sees with them
  install   fetch ${'@node-llama-cpp/linux-x64-<kind>'}@${PIN.nodeLlamaCpp} (npm pack, or HTTPS without npm), check it
            against the registry's integrity and native/pin.json, unpack only the backend library
            vulkan: any GPU with a Vulkan driver; cuda: NVIDIA, CUDA 13 runtime + cuBLAS 13;
            cuda-ext: NVIDIA, CUDA 12 runtime + cuBLAS 12 (older drivers)
  --registry  npm registry (default: npm's configured one, else https://registry.npmjs.org)
  --via       how to fetch the tarball (default auto: npm pack when npm runs here)
  --json      one JSON object per line: {"type":"progress",…}, then {"type":"done",…} (or the list report)`;

export interface BackendArgs {
  action: 'list' | 'install' | 'remove';
  kind: GpuBackendKind | null;
  registry: string | null;
  via: 'auto' | 'npm' | 'https';
  json: boolean;
}

export function parseBackendArgs(args: ParsedArgs): BackendArgs {
  const [action, kind, ...rest] = args.positional;
  if (action !== 'list' && action !== 'install' && action !== 'remove') {
    throw new UsageError(action ? `unknown action '${action}' (list, install, remove)` : 'an action is required (list, install, remove)');
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  rejectUnknownOptions({ options: args.options, positional: [] }, action === 'install' ? ['registry', 'via', 'json', 'help'] : ['json', 'help']);
  let k: GpuBackendKind | null = null;
  if (action === 'list') {
    if (kind !== undefined) throw new UsageError(`unexpected argument '${kind}'`);
  } else {
    if (kind === undefined || !isGpuBackendKind(kind)) {
      throw new UsageError(`${action} needs a backend: ${GPU_BACKEND_KINDS.join(', ')}${kind ? ` (got '${kind}')` : ''}`);
    }
    k = kind;
  }
  const registry = optString(args, 'registry') ?? null;
  if (registry !== null && !/^https?:\/\/\S+$/.test(registry)) throw new UsageError(`--registry must be an http(s) URL, got '${registry}'`);
  const via = optString(args, 'via') ?? 'auto';
  if (via !== 'auto' && via !== 'npm' && via !== 'https') throw new UsageError(`--via must be auto, npm or https, got '${via}'`);
  return { action, kind: k, registry, via, json: optFlag(args, 'json') };
}

const mib = (n: number): string => `${Math.round(n / 2 ** 20)} MiB`;

export function formatBackendsReport(r: BackendsReport): string {
  const lines = [`GPU backends for llama.cpp ${r.llamaCommit.slice(0, 12)} (node-llama-cpp ${r.nodeLlamaCpp}), store ${r.store}`, ''];
  for (const ready of r.readiness) {
    const inst = r.installed.find((b) => b.kind === ready.kind);
    const state = inst ? `installed ${inst.package}@${inst.version} (${mib(inst.bytes)}, sha256 ${inst.sha256.slice(0, 12)}…)` : 'not installed';
    lines.push(`${ready.kind.padEnd(9)} ${state}`);
    lines.push(`          runtime: ${ready.loads ? 'every library it needs is here' : `missing ${ready.missing.map((m) => m.library).join(', ')}`}`);
    for (const m of ready.missing) lines.push(`            ${m.library}: ${m.hint}`);
    if (ready.note) lines.push(`          note: ${ready.note}`);
  }
  const m = r.machine;
  lines.push('', 'machine:');
  lines.push(`  GPUs (PCI)      ${m.gpus.length ? m.gpus.map((g) => `${g.pci} ${g.vendor} ${g.vendorId}:${g.deviceId}`).join(', ') : 'none'}`);
  lines.push(`  NVIDIA driver   ${m.nvidiaDriver ?? 'none'}`);
  lines.push(`  Vulkan loader   ${m.vulkan.loader ?? 'none (libvulkan.so.1 not found)'}`);
  lines.push(`  Vulkan drivers  ${m.vulkan.drivers.length ? m.vulkan.drivers.map((d) => `${d.library}${d.software ? ' (software)' : ''}`).join(', ') : 'none'}`);
  for (const [lib, path] of Object.entries(m.libraries)) lines.push(`  ${lib.padEnd(16)}${path ?? 'not found'}`);
  lines.push('', `devices the engine sees: ${r.devices.map((d) => `${d.name} (${d.description})`).join(', ')}`);
  for (const f of r.failed) lines.push(`did not load: ${describeLoadFailure(f)}`);
  if (r.suggestion) lines.push('', `suggestion: ${r.suggestion.reason}: strata gpu install ${r.suggestion.kind}`);
  return lines.join('\n');
}

function printLine(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function install(o: BackendArgs): Promise<number> {
  const kind = o.kind!;
  const ac = new AbortController();
  const cancel = (): void => ac.abort();
  process.once('SIGINT', cancel);
  process.once('SIGTERM', cancel);
  let lastPct = -1;
  const onProgress = (p: InstallProgress): void => {
    if (o.json) { printLine({ type: 'progress', ...p }); return; }
    if (p.phase === 'download' && p.received && p.total) {
      const pct = Math.floor((100 * p.received) / p.total);
      if (pct === lastPct || pct % 10 !== 0) return;
      lastPct = pct;
      process.stderr.write(`  ${pct}% of ${mib(p.total)}\n`);
      return;
    }
    process.stderr.write(`${p.message}\n`);
  };
  try {
    const b = await installBackend(kind, {
      via: o.via, signal: ac.signal, onProgress, ...(o.registry ? { registry: o.registry } : {}),
    });
    // Does it load here, and what does it see? (This process loads only the installed backends.)
    const r = backendsReport(loadAddon());
    const failed = r.failed.filter((f) => f.path === b.path);
    const devices = r.devices.filter((d) => d.backend !== 'CPU' && d.backend !== 'RPC');
    if (o.json) {
      printLine({ type: 'done', installed: b, loads: failed.length === 0, failed, devices, readiness: r.readiness.find((x) => x.kind === kind) });
    } else {
      process.stdout.write(`installed ${b.library} (${b.package}@${b.version}) in ${b.dir}\n`);
      if (failed.length) {
        const missing = r.readiness.find((x) => x.kind === kind)?.missing ?? [];
        process.stdout.write(`but it does not load here: ${failed.map(describeLoadFailure).join('; ')}\n`);
        if (missing.length > 1) process.stdout.write(`this machine lacks:\n${missing.map((m) => `  ${m.library}: ${m.hint}`).join('\n')}\n`);
        process.stdout.write('The engine falls back to the other backends (Vulkan, else the CPU) until then.\n');
      } else {
        process.stdout.write(`devices: ${devices.length ? devices.map((d) => `${d.name} (${d.description})`).join(', ') : 'none found by this backend'}\n`);
      }
    }
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    if (o.json) printLine({ type: 'error', message, cancelled: ac.signal.aborted });
    else process.stderr.write(`strata gpu install ${kind}: ${message}\n`);
    return ac.signal.aborted ? 130 : 1;
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
  }
}

export const command = {
  summary: 'list and install GPU packages: prebuilt ggml backends (Vulkan, CUDA) for the engine',
  run: (args: ParsedArgs): Promise<number> => runCommand('gpu', USAGE, args, async () => {
    const o = parseBackendArgs(args);
    if (o.action === 'install') return install(o);
    if (o.action === 'remove') {
      const was = installedBackend(o.kind!);
      const removed = removeBackend(o.kind!);
      process.stdout.write(removed ? `removed ${o.kind}${was ? ` (${was.package}@${was.version})` : ''}\n` : `${o.kind} is not installed\n`);
      return 0;
    }
    const r = backendsReport(loadAddon());
    process.stdout.write(o.json ? `${JSON.stringify({ type: 'list', ...r })}\n` : `${formatBackendsReport(r)}\n`);
    return 0;
  }),
};
