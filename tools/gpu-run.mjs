#!/usr/bin/env node
// The GPU measurement run (tools/gpu-bundle.mjs ships it; tools/gpu-run.sh starts it on the
// device once Node is unpacked). Steps, in order, each with its log in <out>/logs/ and its result in
// <out>/steps.json, and <out>/summary.md rewritten after every step, so a run cut short by its time
// limit still brings back what it measured:
//
//   preflight  the machine: GPU (nvidia-smi), nvcc, cuBLAS headers, CMake, ninja, cores, RAM; the source
//   build      stage 1 (llama.cpp + a shared ggml, with CUDA for sm_90 in the cuda flavour) + the addon,
//              then llama-server from the same tree (scripts/build-native.mjs, STRATA_GPU=cuda)
//   devices    `strata devices --json` (the cuda flavour needs CUDA0 there, or the run stops)
//   models     the stand-ins: 0.5B f16 and a 7B-shaped q4_0 (--small: 0.5B f16 and 0.5B q4_0)
//   exact      batched == solo on the device (bench-engine --workload exact), per model
//   bench      bench:compare against llama-server per model: single, concurrent 4/8/16, repeat at 4K,
//              mixed, infill; then repeat at 32K (--small: small sizes, 1 run)
//
//   node tools/gpu-run.mjs [--flavour cuda|cpu] [--out DIR] [--budget-s S] [--steps a,b] [--small]
//                            [--cuda-arch 90] [--runs N] [--native-from DIR] [--tiny] [--plan]
//
// --budget-s: the run stops starting steps when less time is left than a step is estimated to take
// (each step also gets the time left as its limit). A GPU machine that allows 600 s per command takes
// it in two calls: --steps preflight,build,devices,models and then --steps exact,bench (the second
// reuses the first one's work folder). --native-from DIR: use an addon already built in
// DIR instead of building (tests; no llama-server then). --tiny: one tiny test model instead of the
// stand-ins (tests). --plan: print the steps and their commands.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync, createWriteStream } from 'node:fs';
import { cpus, totalmem, freemem, loadavg, release } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ALL_STEPS = ['preflight', 'build', 'devices', 'models', 'exact', 'bench'];

export function parseRunArgs(argv) {
  const o = {
    flavour: 'cuda', out: process.env.OUT ? join(process.env.OUT, 'strata-gpu') : join(root, 'test-output', 'gpu-run'),
    budgetS: 540, steps: ALL_STEPS, small: false, tiny: false, cudaArch: '90', runs: 1, nativeFrom: null, plan: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--flavour') o.flavour = val();
    else if (a === '--out') o.out = resolve(val());
    else if (a === '--budget-s') o.budgetS = Number(val());
    else if (a === '--steps') o.steps = val().split(',').map((s) => s.trim()).filter(Boolean);
    else if (a === '--small') o.small = true;
    else if (a === '--tiny') o.tiny = true;
    else if (a === '--cuda-arch') o.cudaArch = val();
    else if (a === '--runs') o.runs = Number(val());
    else if (a === '--native-from') o.nativeFrom = resolve(val());
    else if (a === '--plan') o.plan = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (o.flavour !== 'cuda' && o.flavour !== 'cpu') throw new Error(`--flavour must be cuda or cpu, got '${o.flavour}'`);
  if (!Number.isFinite(o.budgetS) || o.budgetS <= 0) throw new Error('--budget-s must be a positive number');
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be a positive integer');
  for (const s of o.steps) if (!ALL_STEPS.includes(s)) throw new Error(`unknown step '${s}' (steps: ${ALL_STEPS.join(', ')})`);
  return o;
}

/** Where generated models go: the cache, never the results folder (a 7B stand-in is 4 GB). */
function modelsDir() {
  const cache = process.env.STRATA_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/tmp', '.cache'), 'strata');
  return join(cache, 'gpu-run-models');
}

/** The stand-ins of a flavour: [name, shape, quant]. */
export function standIns(o) {
  if (o.tiny) return [['tiny-q8_0', 'tiny', 'q8_0']];
  return o.small ? [['0.5b-f16', '0.5b', 'f16'], ['0.5b-q4_0', '0.5b', 'q4_0']] : [['0.5b-f16', '0.5b', 'f16'], ['7b-q4_0', '7b', 'q4_0']];
}

/** The build's environment: the flags scripts/build-native.mjs reads. */
export function buildEnv(o) {
  return o.flavour === 'cuda' ? { STRATA_GPU: 'cuda', CUDA_ARCHITECTURES: o.cudaArch } : {};
}

/** Every command of every step, in order: what --plan prints and the test checks. */
export function planSteps(o) {
  const node = process.execPath;
  const strata = join(root, 'dist', 'strata.mjs');
  const build = join(root, 'scripts', 'build-native.mjs');
  const compare = join(root, 'tools', 'bench-compare.mjs');
  const devices = o.flavour === 'cuda' ? ['--devices', 'CUDA0'] : [];
  const small = o.small;
  const steps = [];
  steps.push({ name: 'preflight', estimateS: 5, commands: [] });
  steps.push({
    name: 'build', estimateS: o.nativeFrom ? 5 : o.flavour === 'cuda' ? 420 : 1500,
    commands: o.nativeFrom ? [] : [
      { args: [node, build], env: buildEnv(o) },
      { args: [node, build, '--target', 'llama-server'], env: buildEnv(o) },
    ],
  });
  steps.push({ name: 'devices', estimateS: 15, commands: [{ args: [node, strata, 'devices', '--json'], env: {}, stdout: 'devices.json' }] });
  steps.push({
    name: 'models', estimateS: small ? 30 : 90,
    commands: standIns(o).map(([name, shape, quant]) => ({
      args: [node, strata, 'make-test-model', '--out', join(modelsDir(), `${name}.gguf`), '--shape', shape, '--quant', quant, '--vocab', 'qwen2.5-coder'],
      env: {}, skipIfExists: join(modelsDir(), `${name}.gguf`),
    })),
  });
  steps.push({
    name: 'exact', estimateS: small ? 120 : 60,
    commands: standIns(o).map(([name]) => ({
      args: [node, strata, 'bench-engine', '--workload', 'exact', '--model', join(modelsDir(), `${name}.gguf`), ...devices,
        '--sets', small ? '2' : '5', '--prompts', '4', '--tokens', small ? '12' : '24', '--json', join(o.out, `exact-${name}.json`)],
      env: {},
    })),
  });
  const runs = String(o.runs);
  const main = small
    ? ['--scenarios', 'single,concurrent,repeat,mixed,infill', '--clients', '2,4', '--slots', '4', '--ctx', '2048', '--repeat-tokens', '1024',
      '--gen', '16', '--concurrent-gen', '16', '--mixed-tokens', '1024', '--mixed-shorts', '2', '--infill-requests', '3']
    : ['--scenarios', 'single,concurrent,repeat,mixed,infill', '--clients', '4,8,16', '--slots', '16', '--ctx', '4608', '--repeat-tokens', '4096'];
  const long = small
    ? ['--scenarios', 'repeat', '--slots', '2', '--ctx', '2304', '--repeat-tokens', '2048', '--cache-mib', '1024']
    : ['--scenarios', 'repeat', '--slots', '4', '--ctx', '33024', '--repeat-tokens', '32768', '--cache-mib', '8192'];
  steps.push({
    name: 'bench', estimateS: small ? 900 : 420,
    commands: standIns(o).flatMap(([name]) => {
      const model = join(modelsDir(), `${name}.gguf`);
      return [
        { args: [node, compare, '--prebuilt', '--model', model, '--runs', runs, ...main, '--out', join(o.out, `bench-${name}`)], env: buildEnv(o) },
        { args: [node, compare, '--prebuilt', '--model', model, '--runs', runs, ...long, '--out', join(o.out, `bench-${name}-long`)], env: buildEnv(o) },
      ];
    }),
  });
  return steps.filter((s) => o.steps.includes(s.name));
}

function sh(cmd, args) {
  try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 }).trim(); } catch { return null; }
}

/**
 * nvcc on PATH, else the toolkit's usual places; one found off PATH is put on it (and in CUDACXX) for
 * the build's CMake.
 */
function findNvcc() {
  const onPath = sh('sh', ['-c', 'command -v nvcc']);
  if (onPath) return onPath;
  const found = [process.env.CUDACXX, process.env.CUDA_HOME && join(process.env.CUDA_HOME, 'bin', 'nvcc'), '/usr/local/cuda/bin/nvcc',
    ...['13.1', '13.0', '12.9', '12.8'].map((v) => `/usr/local/cuda-${v}/bin/nvcc`)].find((p) => p && existsSync(p));
  if (!found) return null;
  process.env.CUDACXX = found;
  process.env.PATH = `${dirname(found)}:${process.env.PATH ?? ''}`;
  return found;
}

/** cuBLAS headers where CMake's FindCUDAToolkit looks (the toolkit beside nvcc, CUDA_PATH/HOME, /usr). */
function cublasHeader(nvcc) {
  const roots = [process.env.CUDA_PATH, process.env.CUDA_HOME, nvcc ? resolve(dirname(nvcc), '..') : null, '/usr/local/cuda', '/usr'].filter(Boolean);
  for (const r of roots) {
    for (const inc of ['include', 'targets/x86_64-linux/include']) if (existsSync(join(r, inc, 'cublas_v2.h'))) return join(r, inc, 'cublas_v2.h');
  }
  return null;
}

/** What the machine is; in the cuda flavour a missing piece stops the run here (with what is missing). */
function preflight(o) {
  const gpu = sh('nvidia-smi', ['--query-gpu=name,memory.total,driver_version,compute_cap', '--format=csv,noheader']);
  const nvcc = findNvcc();
  const facts = {
    flavour: o.flavour, date: new Date().toISOString(), kernel: release(), cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '',
    memBytes: totalmem(), freeBytes: freemem(), loadavg: loadavg(), node: process.version,
    gpu, nvcc: nvcc ? `${sh(nvcc, ['--version'])?.split('\n').pop() ?? 'unreadable'} (${nvcc})` : null, cublas: cublasHeader(nvcc),
    cmake: sh('cmake', ['--version'])?.split('\n')[0] ?? null, ninja: sh('ninja', ['--version']), gxx: sh('g++', ['--version'])?.split('\n')[0] ?? null,
  };
  const missing = [];
  if (!facts.cmake) missing.push('cmake');
  if (!facts.gxx) missing.push('g++');
  if (o.flavour === 'cuda') {
    if (!facts.gpu) missing.push('an NVIDIA GPU (nvidia-smi found none)');
    if (!facts.nvcc) missing.push('nvcc');
    if (!facts.cublas) missing.push('cuBLAS headers (cublas_v2.h beside the CUDA toolkit)');
  }
  return { facts, missing };
}

function runCommand(cmd, logFile, timeoutMs) {
  return new Promise((resolveRun) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`$ ${Object.entries(cmd.env).map(([k, v]) => `${k}=${v} `).join('')}${cmd.args.join(' ')}\n`);
    const child = spawn(cmd.args[0], cmd.args.slice(1), { env: { ...process.env, ...cmd.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout = [];
    child.stdout.on('data', (d) => { stdout.push(d); log.write(d); });
    child.stderr.on('data', (d) => log.write(d));
    // The whole process group: bench:compare's servers and the engines they spawn go with it.
    const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ } }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      log.end(`\n[exit ${code ?? signal}]\n`);
      resolveRun({ code, signal, stdout: Buffer.concat(stdout).toString('utf8') });
    });
  });
}

function readJson(file, fallback) {
  try { return JSON.parse(readFileSync(file, 'utf8')); } catch { return fallback; }
}

/** <out>/summary.md from what the steps left in <out>. */
export function writeSummary(out) {
  const steps = readJson(join(out, 'steps.json'), {});
  const pre = readJson(join(out, 'machine.json'), null);
  const lines = ['# Strata GPU run', ''];
  if (pre) {
    lines.push(`${pre.date} · flavour ${pre.flavour} · GPU: ${pre.gpu ?? 'none'} · ${pre.nvcc ?? 'no nvcc'} · ${pre.cpus} × ${pre.cpuModel}, ` +
      `${(pre.memBytes / 2 ** 30).toFixed(0)} GiB RAM · node ${pre.node}`, '');
  }
  lines.push('| step | status | seconds | note |', '|---|---|---:|---|');
  for (const name of ALL_STEPS) {
    const s = steps[name];
    if (s) lines.push(`| ${name} | ${s.status} | ${s.seconds.toFixed(1)} | ${s.note ?? ''} |`);
  }
  const names = new Set([...standIns({ small: false }), ...standIns({ small: true }), ...standIns({ tiny: true })].map(([name]) => name));
  for (const name of names) {
    const e = readJson(join(out, `exact-${name}.json`), null);
    if (e) {
      lines.push('', `Batched == solo, ${name} on ${e.devices.join(',') || 'the default devices'} (${e.placement.map((p) => `${p.device} ${p.layers} layers`).join(', ')}): ` +
        `**${e.identical}/${e.sequences}** sequences identical (${e.sets} sets × ${e.prompts} prompts × ${e.tokens} tokens)` +
        (e.differences.length > 0 ? `; first differences at ${e.differences.slice(0, 6).map((d) => `set ${d.set} prompt ${d.prompt} token ${d.position}`).join(', ')}` : ''));
    }
    for (const suffix of ['', '-long']) {
      const md = join(out, `bench-${name}${suffix}`, 'compare-latest.md');
      if (existsSync(md)) lines.push('', `## bench:compare, ${name}${suffix ? ', repeat at the long context' : ''}`, '', readFileSync(md, 'utf8').replace(/^# .*\n/, '').trim());
    }
  }
  writeFileSync(join(out, 'summary.md'), `${lines.join('\n')}\n`);
}

async function main() {
  const o = parseRunArgs(process.argv.slice(2));
  const steps = planSteps(o);
  if (o.plan) {
    for (const s of steps) {
      process.stdout.write(`${s.name} (about ${s.estimateS} s)\n`);
      for (const c of s.commands) process.stdout.write(`  ${Object.entries(c.env).map(([k, v]) => `${k}=${v} `).join('')}${c.args.join(' ')}\n`);
    }
    return 0;
  }
  mkdirSync(join(o.out, 'logs'), { recursive: true });
  const deadline = Date.now() + o.budgetS * 1000;
  const record = readJson(join(o.out, 'steps.json'), {});
  const save = (name, status, seconds, note) => {
    record[name] = { status, seconds, ...(note ? { note } : {}) };
    writeFileSync(join(o.out, 'steps.json'), `${JSON.stringify(record, null, 2)}\n`);
    writeSummary(o.out);
    process.stderr.write(`[gpu-run] ${name}: ${status}${note ? ` (${note})` : ''} in ${seconds.toFixed(1)} s\n`);
  };
  let failed = false;
  for (const step of steps) {
    const left = (deadline - Date.now()) / 1000;
    if (failed) { save(step.name, 'skipped', 0, 'an earlier step failed'); continue; }
    if (left < step.estimateS) {
      save(step.name, 'skipped', 0, `${left.toFixed(0)} s left of the budget, the step takes about ${step.estimateS} s`);
      // Nothing can be measured without a build, devices and models.
      if (['build', 'devices', 'models'].includes(step.name)) failed = true;
      continue;
    }
    const t0 = Date.now();
    const logFile = join(o.out, 'logs', `${step.name}.log`);
    if (step.name === 'preflight') {
      const { facts, missing } = preflight(o);
      writeFileSync(join(o.out, 'machine.json'), `${JSON.stringify(facts, null, 2)}\n`);
      if (missing.length > 0) { failed = true; save(step.name, 'failed', (Date.now() - t0) / 1000, `missing: ${missing.join('; ')}`); continue; }
      save(step.name, 'ok', (Date.now() - t0) / 1000, facts.gpu ?? `${facts.cpus} CPUs`);
      continue;
    }
    if (step.name === 'build' && o.nativeFrom) {
      cpSync(o.nativeFrom, join(root, 'native', 'build'), { recursive: true });
      save(step.name, 'ok', (Date.now() - t0) / 1000, `addon copied from ${o.nativeFrom} (no llama-server)`);
      continue;
    }
    // A build, device or model failure leaves nothing to measure; one model's exactness or bench
    // failure does not keep the other model from its turn.
    const essential = ['build', 'devices', 'models'].includes(step.name);
    let status = 'ok';
    const notes = [];
    for (const cmd of step.commands) {
      if (cmd.skipIfExists && existsSync(cmd.skipIfExists)) continue;
      if (cmd.skipIfExists) mkdirSync(dirname(cmd.skipIfExists), { recursive: true });
      const limit = Math.max(1000, deadline - Date.now());
      const r = await runCommand(cmd, logFile, limit);
      if (cmd.stdout) writeFileSync(join(o.out, cmd.stdout), r.stdout);
      if (r.code !== 0) {
        status = 'failed';
        const what = cmd.args.slice(2).find((x) => x.endsWith('.gguf'))?.split('/').pop() ?? cmd.args.slice(1, 4).join(' ');
        notes.push(r.signal ? `${what}: stopped at the budget's end (${r.signal})` : `${what}: exit ${r.code}`);
        if (essential || r.signal) break;
      }
    }
    let note = notes.join('; ');
    if (status === 'ok' && step.name === 'devices') {
      const devices = readJson(join(o.out, 'devices.json'), []);
      note = devices.map((d) => `${d.name} ${Math.round(d.memoryFree / 2 ** 20)}/${Math.round(d.memoryTotal / 2 ** 20)} MiB`).join(', ');
      if (o.flavour === 'cuda' && !devices.some((d) => d.name === 'CUDA0')) { status = 'failed'; note = `no CUDA0 among ${note}`; }
    }
    if (status === 'failed' && essential) failed = true;
    save(step.name, status, (Date.now() - t0) / 1000, note);
  }
  process.stdout.write(readFileSync(join(o.out, 'summary.md'), 'utf8'));
  return failed ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then((code) => { process.exitCode = code; }, (err) => {
    process.stderr.write(`gpu-run: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  });
}
