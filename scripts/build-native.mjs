#!/usr/bin/env node
// Builds the native engine in two stages, both cached outside the checkout:
//
// 1. llama.cpp (libllama, a shared ggml, its backends) from the pinned source, patched with
//    native/patches/*.patch, in ~/.cache/strata/native/<source>-<gpu>-<flags>/. Its products are
//    published into lib/ by a rename once complete, under a lock, so concurrent installs from
//    several clones share one build and never see half of one.
// 2. the N-API addon (native/src) against those libraries: seconds, per checkout.
//
// Then native/build/ gets the addon, the libraries (every x86-64 CPU variant of ggml as its own
// libggml-cpu-*.so: the engine picks one at run time) and two tokenizer GGUFs for the demo model.
//
//   node scripts/build-native.mjs                 build and install the addon -> native/build/
//   node scripts/build-native.mjs --target NAME   build a llama.cpp tool from the same source (prints its path)
//   node scripts/build-native.mjs --out DIR       install into DIR instead (e.g. a native build beside the portable one)
//   node scripts/build-native.mjs --platform P    cross-compile for P (linux-arm64, win32-x64) from an x86-64 Linux
//                                                 host, into native/build-P/ (default: the host, into native/build/)
//   STRATA_CPU_VARIANTS=baseline                  (cross builds) one baseline CPU library instead of every variant:
//                                                 minutes shorter; what CI's emulated tests use, never shipped
//   STRATA_NATIVE=1                               -march=native instead of the CPU variants (local speed only;
//                                                 never ship it: it dies with SIGILL on older CPUs)
//   STRATA_GPU=cuda|vulkan                        build that ggml backend from source too (needs its SDK)
//   STRATA_CACHE_DIR=DIR                          cache root (default ~/.cache/strata)
//
// Cross builds use a CMake toolchain file from native/toolchains/ and the Debian cross compilers
// named in PLATFORMS; their cache entries are keyed by platform (and the toolchain file's text).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, homedir, hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
/** The pin shared with the backend installer (backend/gpu-backends/pin.ts reads the same file). */
const PIN = JSON.parse(readFileSync(join(root, 'native', 'pin.json'), 'utf8'));
const LLAMA_COMMIT = PIN.llamaCommit;
const PATCH_DIR = join(root, 'native', 'patches');

export const cacheRoot = process.env.STRATA_CACHE_DIR
  ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'strata');

// What commands print goes to stderr: stdout carries only `--target`'s answer (the tool's path),
// which callers capture while CMake's progress shows on the terminal.
function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: ['inherit', process.stderr.fd, process.stderr.fd], ...opts });
}

function log(msg) {
  process.stderr.write(`[strata native] ${msg}\n`);
}

// --- platforms ------------------------------------------------------------------------------

export const HOST_PLATFORM = `${process.platform}-${process.arch}`;

/**
 * What the build knows per platform: the toolchain file and Debian package of a cross build, how
 * the platform names shared libraries, and the CPU library a baseline build gets. `allVariants`
 * replaces the toolchain for the build with every CPU variant where the baseline's compiler
 * cannot make them all.
 */
export const PLATFORMS = {
  'linux-x64': { toolchain: null, toolchainFiles: [], compiler: null, pkg: null, lib: /^lib.*\.so$/, baselineFlags: {} },
  'linux-arm64': {
    toolchain: 'linux-arm64.cmake', toolchainFiles: ['linux-arm64.cmake'], compiler: 'aarch64-linux-gnu-g++', pkg: 'g++-aarch64-linux-gnu',
    lib: /^lib.*\.so$/, baselineFlags: { GGML_CPU_ARM_ARCH: 'armv8-a' },
    // GCC 12 stops before -march=armv9.2-a (the SVE2 and SME variants); clang 19 reaches it.
    allVariants: { toolchain: 'linux-arm64-clang.cmake', toolchainFiles: ['linux-arm64-clang.cmake'], compiler: 'clang++-19', pkg: 'clang-19 g++-aarch64-linux-gnu' },
  },
  'win32-x64': {
    toolchain: 'win32-x64.cmake', toolchainFiles: ['win32-x64.cmake', 'mingw-compat.h'], compiler: 'x86_64-w64-mingw32-g++-posix', pkg: 'g++-mingw-w64-x86-64-posix',
    lib: /\.dll$/, baselineFlags: {},
  },
};

let platform = HOST_PLATFORM;

/** The platform the functions below build for (the host unless --platform or this says otherwise). */
export function setPlatform(p) {
  if (!Object.hasOwn(PLATFORMS, p)) throw new Error(`--platform must be one of ${Object.keys(PLATFORMS).join(', ')}, got '${p}'`);
  if (p !== HOST_PLATFORM && HOST_PLATFORM !== 'linux-x64') throw new Error(`cross builds run on an x86-64 Linux host, not ${HOST_PLATFORM}`);
  platform = p;
}

const isCross = () => platform !== HOST_PLATFORM;

/** Which CPU libraries a cross build makes: every variant of the platform, or its baseline one. */
function cpuVariants() {
  const variants = process.env.STRATA_CPU_VARIANTS ?? 'all';
  if (variants !== 'all' && variants !== 'baseline') throw new Error(`STRATA_CPU_VARIANTS must be all or baseline, got '${variants}'`);
  return variants;
}

/** The toolchain of this build: the platform's, or its `allVariants` one for a build of every variant. */
export function crossTools() {
  const p = PLATFORMS[platform];
  return isCross() && cpuVariants() === 'all' && p.allVariants ? { ...p, ...p.allVariants } : p;
}

function toolchainFile() {
  const t = crossTools().toolchain;
  return t ? join(root, 'native', 'toolchains', t) : null;
}

/** The cross compiler of the platform, checked before CMake so a missing one is named with its package. */
function checkCrossCompiler() {
  const { compiler, pkg } = crossTools();
  if (compiler && !onPath(compiler)) {
    throw new Error(`cross-compiling for ${platform} needs ${compiler} (Debian: apt install ${pkg})`);
  }
}

// --- locking: one builder per cache entry, across processes and clones -----------------------

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function ownerAlive(lockDir) {
  let owner;
  try {
    owner = JSON.parse(readFileSync(join(lockDir, 'owner.json'), 'utf8'));
  } catch {
    // Just created and not yet written, or written by a crashed process long ago.
    try { return Date.now() - statSync(lockDir).mtimeMs < 30_000; } catch { return false; }
  }
  if (owner.host !== hostname()) return true; // another machine's process: cannot tell, wait
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Runs fn holding `<path>.lock` (a folder: mkdir is atomic). A lock whose owner died is taken over. */
export function withLock(path, what, fn) {
  const lockDir = `${path}.lock`;
  mkdirSync(dirname(lockDir), { recursive: true });
  let said = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname(), what }));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      if (!ownerAlive(lockDir)) {
        log(`taking over the lock of a process that died: ${lockDir}`);
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!said) log(`waiting for another install that is building ${what} (${lockDir})`);
      said = true;
      sleepMs(1000);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

// --- stage 0: the pinned, patched source --------------------------------------------------

function patches() {
  if (!existsSync(PATCH_DIR)) return [];
  return readdirSync(PATCH_DIR).filter((f) => f.endsWith('.patch')).sort().map((f) => join(PATCH_DIR, f));
}

/** Hash of the patch set: part of every build key, so a new patch gives new builds. */
export function patchKey() {
  const h = createHash('sha256');
  for (const p of patches()) h.update(readFileSync(p));
  return h.digest('hex').slice(0, 8);
}

/** Where the pinned, patched source lives: a folder per patch set. */
export function sourceDir() {
  return join(cacheRoot, 'src', `llama.cpp-${LLAMA_COMMIT.slice(0, 12)}-p${patchKey()}`);
}

/**
 * The pinned llama.cpp source with native/patches applied, fetched once per patch set (a folder of
 * its own, so clones with other patch sets never change a tree another build uses).
 */
export function ensureSource() {
  const srcDir = sourceDir();
  const stamp = join(srcDir, '.strata-ready');
  if (existsSync(stamp)) return srcDir;
  return withLock(srcDir, 'the llama.cpp source', () => {
    if (existsSync(stamp)) return srcDir;
    const tmp = fetchSource();
    try {
      for (const p of patches()) {
        log(`applying ${p.slice(root.length + 1)}`);
        run('git', ['-C', tmp, 'apply', '--whitespace=nowarn', p]);
      }
      writeFileSync(join(tmp, '.strata-ready'), `${patchKey()}\n`);
      rmSync(srcDir, { recursive: true, force: true });
      renameSync(tmp, srcDir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return srcDir;
  });
}

/** Clones the pinned commit from the node-llama-cpp package's git bundle into a temporary folder. */
function fetchSource() {
  const work = join(cacheRoot, 'src', `tmp-${process.pid}`);
  const tree = `${work}-tree`;
  rmSync(work, { recursive: true, force: true });
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    log(`fetching llama.cpp source (node-llama-cpp@${PIN.nodeLlamaCpp} git bundle)`);
    run('npm', ['pack', `node-llama-cpp@${PIN.nodeLlamaCpp}`, '--silent'], { cwd: work });
    run('tar', ['xzf', `node-llama-cpp-${PIN.nodeLlamaCpp}.tgz`, 'package/llama/gitRelease.bundle'], { cwd: work });
    run('git', ['clone', '-q', join(work, 'package/llama/gitRelease.bundle'), tree]);
    run('git', ['-c', 'advice.detachedHead=false', '-C', tree, 'checkout', '-q', LLAMA_COMMIT]);
    return tree;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- stage 1: llama.cpp + ggml -------------------------------------------------------------

/**
 * CMake flags of stage 1; any change gives a new cache entry. The default is the portable build
 * that ships: shared ggml, backends loaded at run time, every x86-64 CPU variant.
 */
export function buildFlags() {
  const gpu = process.env.STRATA_GPU ?? '';
  return isCross() ? crossFlags(gpu) : hostFlags(gpu);
}

function hostFlags(gpu) {
  if (gpu !== '' && gpu !== 'cuda' && gpu !== 'vulkan') throw new Error(`STRATA_GPU must be cuda or vulkan, got '${gpu}'`);
  const native = process.env.STRATA_NATIVE === '1';
  const flags = {
    CMAKE_BUILD_TYPE: 'Release',
    BUILD_SHARED_LIBS: 'ON',
    // Libraries and tools find each other beside themselves wherever the folder is copied.
    CMAKE_BUILD_RPATH_USE_ORIGIN: 'ON',
    CMAKE_PLATFORM_NO_VERSIONED_SONAME: 'ON',
    GGML_BACKEND_DL: native ? 'OFF' : 'ON',
    GGML_NATIVE: native ? 'ON' : 'OFF',
    GGML_CPU_ALL_VARIANTS: native ? 'OFF' : 'ON',
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
  };
  if (gpu === 'cuda' && process.env.CUDA_ARCHITECTURES) flags.CMAKE_CUDA_ARCHITECTURES = process.env.CUDA_ARCHITECTURES;
  return flags;
}

/**
 * A cross build: the portable CPU build (every CPU variant of the platform as a library ggml loads
 * at run time), or with STRATA_CPU_VARIANTS=baseline one CPU library for the oldest CPU of the
 * platform. No GPU backend is built from source here.
 */
function crossFlags(gpu) {
  if (gpu !== '') throw new Error(`STRATA_GPU=${gpu} is for the host build; cross builds (--platform ${platform}) are CPU only`);
  const variants = cpuVariants();
  const flags = {
    ...hostFlags(''), CMAKE_TOOLCHAIN_FILE: toolchainFile(), GGML_BACKEND_DL: 'ON', GGML_NATIVE: 'OFF', GGML_CPU_ALL_VARIANTS: 'ON',
  };
  // Examples and the server are never built for another platform (they only slow the configure
  // step); tools stay on because libmtmd (images) is one of them, and only the targets asked are built.
  Object.assign(flags, { LLAMA_BUILD_EXAMPLES: 'OFF', LLAMA_BUILD_SERVER: 'OFF' });
  if (variants === 'baseline') Object.assign(flags, { GGML_CPU_ALL_VARIANTS: 'OFF', ...PLATFORMS[platform].baselineFlags });
  return flags;
}

function entryName(flags) {
  const { CMAKE_TOOLCHAIN_FILE: toolchain, ...rest } = flags;
  // The toolchain file's text, not its path: clones share the entry, and a changed compiler flag gives a new one.
  const h = createHash('sha256').update(JSON.stringify(toolchain ? rest : flags));
  if (toolchain) for (const f of crossTools().toolchainFiles) h.update(readFileSync(join(root, 'native', 'toolchains', f)));
  const key = h.digest('hex').slice(0, 10);
  const kind = isCross() ? `cpu-${platform}${flags.GGML_CPU_ALL_VARIANTS === 'OFF' ? '-baseline' : ''}`
    : process.env.STRATA_GPU || (flags.GGML_NATIVE === 'ON' ? 'native' : 'cpu');
  return `${LLAMA_COMMIT.slice(0, 12)}-p${patchKey()}-${kind}-${key}`;
}

/** The stage-1 cache entry: build/ (CMake's tree) and lib/ (the published libraries). */
export function entryDir(flags = buildFlags()) {
  return join(cacheRoot, 'native', entryName(flags));
}

function hasNinja() {
  try { execFileSync('ninja', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
}

function jobs() {
  return String(Math.max(1, Number(process.env.STRATA_BUILD_JOBS ?? 0) || availableParallelism()));
}

/** Builds `targets` in the entry's CMake tree; the caller holds the entry lock. */
function cmakeBuild(srcDir, entry, flags, targets) {
  const bdir = join(entry, 'build');
  if (!existsSync(join(bdir, 'build.ninja')) && !existsSync(join(bdir, 'Makefile'))) {
    mkdirSync(bdir, { recursive: true });
    run('cmake', [...(hasNinja() ? ['-G', 'Ninja'] : []), '-S', srcDir, '-B', bdir,
      ...Object.entries(flags).map(([k, v]) => `-D${k}=${v}`)]);
  }
  log(`building ${targets.join(', ')} in ${bdir} (the first build takes minutes; later ones are cached)`);
  run('cmake', ['--build', bdir, '--target', ...targets, '-j', jobs()]);
  return join(bdir, 'bin');
}

function onPath(cmd) {
  try { execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }); return true; } catch { return false; }
}

/**
 * What a source build of a GPU backend needs beyond the CPU build, checked before CMake so that a
 * missing SDK piece is named (with the Debian package) instead of failing minutes into a build.
 * Returns the problems; empty when the build can start.
 */
export function gpuBuildProblems(gpu = process.env.STRATA_GPU ?? '', env = process.env, exists = existsSync, hasCommand = onPath) {
  const problems = [];
  const sdk = env.VULKAN_SDK;
  if (gpu === 'vulkan') {
    if (!hasCommand('glslc') && !(sdk && exists(join(sdk, 'bin', 'glslc')))) problems.push('glslc, the shader compiler (Debian: apt install glslc)');
    if (!exists('/usr/include/vulkan/vulkan.h') && !(sdk && exists(join(sdk, 'include', 'vulkan', 'vulkan.h')))) {
      problems.push('the Vulkan headers and loader library (Debian: apt install libvulkan-dev)');
    }
    const spirv = ['/usr/share/cmake/SPIRV-Headers', '/usr/lib/cmake/SPIRV-Headers', '/usr/local/share/cmake/SPIRV-Headers'];
    if (!spirv.some((d) => exists(d)) && !(sdk && exists(join(sdk, 'share', 'cmake', 'SPIRV-Headers')))) {
      problems.push('SPIRV-Headers with its CMake config (Debian: apt install spirv-headers)');
    }
  } else if (gpu === 'cuda') {
    const nvcc = env.CUDACXX ? exists(env.CUDACXX) : hasCommand('nvcc') || exists('/usr/local/cuda/bin/nvcc');
    if (!nvcc) problems.push('nvcc, the CUDA compiler (the CUDA toolkit: https://developer.nvidia.com/cuda-downloads; or set CUDACXX)');
    const roots = [env.CUDA_PATH, env.CUDA_HOME, '/usr/local/cuda', '/usr'].filter(Boolean);
    if (!roots.some((r) => exists(join(r, 'include', 'cublas_v2.h')))) {
      problems.push("cuBLAS headers and libraries (cublas_v2.h; NVIDIA's libcublas-dev-<version> package of the same CUDA version)");
    }
  }
  return problems;
}

/** The libraries stage 1 publishes: libllama, ggml (with its backends) and libmtmd (images, through a projector). */
const LIBRARY_TARGETS = ['llama', 'ggml', 'mtmd'];

/** A library target's file as the platform names it: libllama.so; with MinGW libllama.dll, but ggml.dll (ggml drops the prefix). */
const libraryFile = (t) => (!platform.startsWith('win32-') ? `lib${t}.so` : t.startsWith('ggml') ? `${t}.dll` : `lib${t}.dll`);

/** An entry published before a library joined LIBRARY_TARGETS: the published manifest, else null. */
function publishedWithout(lib) {
  const manifest = JSON.parse(readFileSync(join(lib, 'manifest.json'), 'utf8'));
  return LIBRARY_TARGETS.every((t) => manifest.files.includes(libraryFile(t))) ? null : manifest;
}

/**
 * Adds the libraries an older entry lacks, built in its own tree (incremental: libllama and ggml
 * are already built there). Additive, each file by copy + rename, the manifest last, so that an
 * install copying from lib/ meanwhile never sees a missing file.
 */
function completeEntry(srcDir, entry, flags, lib) {
  const manifest = publishedWithout(lib);
  if (!manifest) return;
  const bin = cmakeBuild(srcDir, entry, flags, LIBRARY_TARGETS);
  const added = LIBRARY_TARGETS.map(libraryFile).filter((f) => !manifest.files.includes(f));
  for (const f of added) replaceFile(join(bin, f), join(lib, f));
  const tmp = join(lib, `manifest.json.tmp-${process.pid}`);
  writeFileSync(tmp, JSON.stringify({ ...manifest, files: [...manifest.files, ...added].sort() }, null, 2));
  renameSync(tmp, join(lib, 'manifest.json'));
}

/** Builds libllama, ggml and libmtmd once per entry and publishes them into <entry>/lib; returns that folder. */
export function ensureLlama() {
  const flags = buildFlags();
  const entry = entryDir(flags);
  const lib = join(entry, 'lib');
  if (existsSync(join(lib, 'manifest.json'))) {
    if (!publishedWithout(lib)) return lib;
    const srcDir = ensureSource();
    withLock(entry, `libmtmd (${entryName(flags)})`, () => completeEntry(srcDir, entry, flags, lib));
    return lib;
  }
  const gpu = process.env.STRATA_GPU ?? '';
  const missing = gpuBuildProblems(gpu);
  if (missing.length > 0) {
    throw new Error(`STRATA_GPU=${gpu} builds ggml's ${gpu} backend from source and needs: ${missing.join('; ')}. ` +
      `Without a toolkit, use the prebuilt backend instead: npm install, then node bin/strata.mjs backend install ${gpu}`);
  }
  checkCrossCompiler();
  const srcDir = ensureSource();
  return withLock(entry, `llama.cpp (${entryName(flags)})`, () => {
    if (existsSync(join(lib, 'manifest.json'))) return lib;
    const started = Date.now();
    // `ggml` depends on every backend module, so this builds the CPU variants and GPU backends too.
    const bin = cmakeBuild(srcDir, entry, flags, LIBRARY_TARGETS);
    const tmp = `${lib}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const files = readdirSync(bin).filter((f) => PLATFORMS[platform].lib.test(f)).sort();
    for (const f of files) copyFileSync(join(bin, f), join(tmp, f));
    const { CMAKE_TOOLCHAIN_FILE, ...portable } = flags; // no absolute path of this machine in the manifest
    writeFileSync(join(tmp, 'manifest.json'), JSON.stringify({
      llamaCommit: LLAMA_COMMIT, patches: patchKey(), platform,
      flags: CMAKE_TOOLCHAIN_FILE ? { ...portable, CMAKE_TOOLCHAIN_FILE: `native/toolchains/${crossTools().toolchain}` } : flags,
      files, builtAt: new Date().toISOString(),
    }, null, 2));
    log(`llama.cpp for ${platform} built in ${Math.round((Date.now() - started) / 1000)} s`);
    rmSync(lib, { recursive: true, force: true });
    renameSync(tmp, lib);
    return lib;
  });
}

/**
 * Path of a built llama.cpp tool (llama-server, llama-batched-bench, …), building it first if
 * needed. A tool already in the entry is that entry's build (the entry is keyed by source, patches
 * and flags; a build writes it last, and one cut short leaves none), so it is used as it is.
 */
export function toolPath(target) {
  if (isCross()) throw new Error(`--target builds host tools only; not with --platform ${platform}`);
  const flags = buildFlags();
  const entry = entryDir(flags);
  ensureLlama();
  const srcDir = ensureSource();
  return withLock(entry, target, () => {
    const built = join(entry, 'build', 'bin', target);
    if (existsSync(built)) return built;
    return join(cmakeBuild(srcDir, entry, flags, [target]), target);
  });
}

// --- stage 2: the addon ------------------------------------------------------------------

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

/** Builds the addon against `lib` in a cache folder of this checkout; returns the .node path. */
function buildAddon(srcDir, lib) {
  const flags = buildFlags();
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 8);
  const bdir = join(cacheRoot, 'addon', `${checkout}-${entryName(flags)}`);
  return withLock(bdir, 'the addon', () => {
    if (!existsSync(join(bdir, 'build.ninja')) && !existsSync(join(bdir, 'Makefile'))) {
      mkdirSync(bdir, { recursive: true });
      const cross = flags.CMAKE_TOOLCHAIN_FILE ? [`-DCMAKE_TOOLCHAIN_FILE=${flags.CMAKE_TOOLCHAIN_FILE}`] : [];
      const apiDir = dirname(require.resolve('node-api-headers/package.json'));
      run('cmake', [...(hasNinja() ? ['-G', 'Ninja'] : []), '-S', join(root, 'native'), '-B', bdir, ...cross,
        `-DNODE_API_DEF=${join(apiDir, 'def', 'node_api.def')}`,
        '-DCMAKE_BUILD_TYPE=Release', `-DLLAMA_SRC=${srcDir}`, `-DLLAMA_LIB_DIR=${lib}`,
        `-DSTRATA_BACKEND_DL=${flags.GGML_BACKEND_DL}`,
        `-DNODE_API_INCLUDE=${join(dirname(require.resolve('node-api-headers/package.json')), 'include')}`,
        `-DNODE_ADDON_API_INCLUDE=${dirname(require.resolve('node-addon-api/package.json'))}`]);
    }
    run('cmake', ['--build', bdir, '-j', jobs()]);
    return join(bdir, 'strata.node');
  });
}

/** native/build/ for the host, native/build-<platform>/ for a cross build. */
export function defaultOut(p = platform) {
  return join(root, 'native', p === HOST_PLATFORM ? 'build' : `build-${p}`);
}

/** `out` (native/build/): the addon, the libraries beside it (found through $ORIGIN), the shipped vocabularies. */
function install(addon, lib, srcDir, out) {
  mkdirSync(join(out, 'vocab'), { recursive: true });
  // Libraries of another flavour (a native build after a portable one) must not linger beside it.
  const manifest = JSON.parse(readFileSync(join(lib, 'manifest.json'), 'utf8'));
  const wanted = new Set(manifest.files);
  for (const f of readdirSync(out)) if ((/^lib.*\.so$/.test(f) || /\.dll$/.test(f)) && !wanted.has(f)) rmSync(join(out, f));
  for (const f of wanted) replaceFile(join(lib, f), join(out, f));
  replaceFile(addon, join(out, 'strata.node'));
  // The platform the binaries are for: packaging and the extension's start-up check read it.
  writeFileSync(join(out, 'build-manifest.json'), JSON.stringify({ ...manifest, platform }, null, 2));
  for (const v of SHIPPED_VOCABS) {
    copyFileSync(join(srcDir, 'models', `ggml-vocab-${v}.gguf`), join(out, 'vocab', `ggml-vocab-${v}.gguf`));
  }
  log(`addon ready: ${join(out, 'strata.node')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
  try {
    const p = arg('--platform');
    if (p) setPlatform(p);
    const target = arg('--target');
    if (target) {
      process.stdout.write(`${toolPath(target)}\n`);
    } else {
      const lib = ensureLlama();
      const srcDir = ensureSource();
      install(buildAddon(srcDir, lib), lib, srcDir, resolve(arg('--out') ?? defaultOut()));
    }
  } catch (err) {
    // A failed command already printed its output; say what failed in one line and exit non-zero.
    log(`build failed: ${err.message.split('\n')[0]}`);
    process.exit(1);
  }
}
