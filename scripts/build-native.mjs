#!/usr/bin/env node
// Builds the native engine (N-API addon over llama.cpp) and, on request, llama.cpp tools
// (llama-server, llama-batched-bench) from the same pinned source.
//
// The source comes from the pinned node-llama-cpp npm package (its git bundle), fetched once
// with `npm pack` into the user cache. The CMake build folder lives in the cache too, keyed by
// source commit + flags, so a second `npm install` only relinks the addon (seconds).
//
//   node scripts/build-native.mjs                 build the addon -> native/build/strata.node
//   node scripts/build-native.mjs --target NAME   also build a llama.cpp target (prints its path)
//   STRATA_GPU=cuda|vulkan                        GPU backend (dynamic backends beside the addon)
//   STRATA_PORTABLE=1                             all CPU variants instead of -march=native
//   STRATA_CACHE_DIR=DIR                          cache root (default ~/.cache/strata)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE_LLAMA_CPP_VERSION = '3.21.1';
const LLAMA_COMMIT = '80fb11ac73e66d89eae2c6a91d8a77428fa733ed';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

export const cacheRoot = process.env.STRATA_CACHE_DIR
  ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'strata');

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: 'inherit', ...opts });
}

function log(msg) {
  process.stderr.write(`[strata native] ${msg}\n`);
}

/** Fetches and unpacks the pinned llama.cpp source once; returns its folder. */
export function ensureSource() {
  const srcDir = join(cacheRoot, 'src', `llama.cpp-${LLAMA_COMMIT.slice(0, 12)}`);
  if (existsSync(join(srcDir, 'CMakeLists.txt'))) return srcDir;
  const work = join(cacheRoot, 'src', `tmp-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    log(`fetching llama.cpp source (node-llama-cpp@${NODE_LLAMA_CPP_VERSION} git bundle)`);
    run('npm', ['pack', `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, '--silent'], { cwd: work });
    run('tar', ['xzf', `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}.tgz`, 'package/llama/gitRelease.bundle'], { cwd: work });
    run('git', ['clone', '-q', 'package/llama/gitRelease.bundle', 'llama.cpp'], { cwd: work });
    run('git', ['-c', 'advice.detachedHead=false', 'checkout', '-q', LLAMA_COMMIT], { cwd: join(work, 'llama.cpp') });
    rmSync(srcDir, { recursive: true, force: true });
    renameSync(join(work, 'llama.cpp'), srcDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return srcDir;
}

/** CMake flags; any change gives a new build folder. */
export function buildFlags() {
  const gpu = process.env.STRATA_GPU ?? '';
  const portable = process.env.STRATA_PORTABLE === '1';
  const dynamicBackends = gpu !== '' || portable;
  const flags = {
    CMAKE_BUILD_TYPE: 'Release',
    BUILD_SHARED_LIBS: dynamicBackends ? 'ON' : 'OFF',
    GGML_BACKEND_DL: dynamicBackends ? 'ON' : 'OFF',
    GGML_NATIVE: portable ? 'OFF' : 'ON',
    GGML_CPU_ALL_VARIANTS: portable ? 'ON' : 'OFF',
    GGML_OPENMP: 'OFF',
    GGML_RPC: 'ON',
    GGML_CUDA: gpu === 'cuda' ? 'ON' : 'OFF',
    GGML_VULKAN: gpu === 'vulkan' ? 'ON' : 'OFF',
    LLAMA_BUILD_COMMON: 'ON',
    LLAMA_BUILD_TOOLS: 'ON',
    LLAMA_BUILD_EXAMPLES: 'ON',
    LLAMA_BUILD_SERVER: 'ON',
    LLAMA_BUILD_TESTS: 'OFF',
    LLAMA_BUILD_APP: 'OFF',
    LLAMA_BUILD_UI: 'OFF',
    LLAMA_USE_PREBUILT_UI: 'OFF',
    LLAMA_OPENSSL: 'OFF',
    LLAMA_BUILD_IS_DEV: 'OFF',
    CMAKE_PLATFORM_NO_VERSIONED_SONAME: 'ON',
  };
  if (gpu === 'cuda' && process.env.CUDA_ARCHITECTURES) flags.CMAKE_CUDA_ARCHITECTURES = process.env.CUDA_ARCHITECTURES;
  return flags;
}

export function buildDir(flags = buildFlags()) {
  const key = createHash('sha256').update(JSON.stringify(flags)).digest('hex').slice(0, 10);
  return join(cacheRoot, 'native', `${LLAMA_COMMIT.slice(0, 12)}-${process.env.STRATA_GPU || 'cpu'}-${key}`);
}

function configure(srcDir, bdir, flags) {
  if (existsSync(join(bdir, 'build.ninja')) || existsSync(join(bdir, 'Makefile'))) return;
  mkdirSync(bdir, { recursive: true });
  const nodeApi = dirname(require.resolve('node-api-headers/package.json'));
  const addonApi = dirname(require.resolve('node-addon-api/package.json'));
  const gen = hasNinja() ? ['-G', 'Ninja'] : [];
  run('cmake', [...gen, '-S', join(root, 'native'), '-B', bdir,
    `-DLLAMA_SRC=${srcDir}`, `-DNODE_API_INCLUDE=${join(nodeApi, 'include')}`,
    `-DNODE_ADDON_API_INCLUDE=${addonApi}`,
    ...Object.entries(flags).map(([k, v]) => `-D${k}=${v}`)]);
}

function hasNinja() {
  try { execFileSync('ninja', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
}

export function build(targets = ['strata_addon']) {
  const flags = buildFlags();
  const srcDir = ensureSource();
  const bdir = buildDir(flags);
  configure(srcDir, bdir, flags);
  const jobs = String(Math.max(1, Number(process.env.STRATA_BUILD_JOBS ?? 0) || (os().availableParallelism?.() ?? 2)));
  log(`building ${targets.join(', ')} in ${bdir} (first build takes minutes; later ones are cached)`);
  run('cmake', ['--build', bdir, '--target', ...targets, '-j', jobs]);
  return bdir;
}

function os() { return require('node:os'); }

/** Tokenizer GGUFs shipped beside the addon so the demo model can be made without the source. */
const SHIPPED_VOCABS = ['starcoder', 'qwen2'];

/**
 * Copy + rename: a running process (a test worker, an engine host) keeps the old file it mapped.
 * Copying over a loaded .node in place changes its pages under that process and crashes it.
 */
function replaceFile(src, dst) {
  const tmp = `${dst}.tmp-${process.pid}`;
  copyFileSync(src, tmp);
  renameSync(tmp, dst);
}

/** Copies the addon (and dynamic backends, if any) and the shipped vocabularies into native/build/. */
function install(bdir, srcDir) {
  const out = join(root, 'native', 'build');
  mkdirSync(join(out, 'vocab'), { recursive: true });
  replaceFile(join(bdir, 'strata.node'), join(out, 'strata.node'));
  for (const v of SHIPPED_VOCABS) {
    copyFileSync(join(srcDir, 'models', `ggml-vocab-${v}.gguf`), join(out, 'vocab', `ggml-vocab-${v}.gguf`));
  }
  const binDir = join(bdir, 'bin');
  if (existsSync(binDir)) {
    for (const f of readdirSync(binDir)) if (/^lib.*\.so$/.test(f)) replaceFile(join(binDir, f), join(out, f));
  }
  log(`addon ready: ${join(out, 'strata.node')}`);
}

/** Path of a built llama.cpp tool, building it first if needed. */
export function toolPath(target) {
  const bdir = build([target]);
  return join(bdir, 'bin', target);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--target');
  if (i > 0) {
    process.stdout.write(`${toolPath(process.argv[i + 1])}\n`);
  } else {
    install(build(), ensureSource());
  }
}
