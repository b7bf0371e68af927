#!/usr/bin/env node
// Host side of the win32-x64 suite: bundles suite.ts (esbuild, like the product's own bundles),
// prepares a Wine prefix in the user cache (Windows 10 reported: Node 20 refuses older), and runs
// the suite with the Windows Node under Wine on the MinGW build of the engine.
//
//   node test/emulated/win/run.mjs NODE_EXE ADDON     (scripts/test-emulated.mjs win32-x64 calls it)
//
// Wine's console handles are not pipes Node can open (EBADF), so the suite writes to files that
// are streamed here as they grow. Paths go to Windows as Z:\… (Wine's default drive for /).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const [nodeExe, addon] = process.argv.slice(2);
if (!nodeExe || !addon) {
  process.stderr.write('usage: run.mjs NODE_EXE ADDON\n');
  process.exit(2);
}
const cacheRoot = process.env.STRATA_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'), 'strata');
const out = join(root, 'test-output', 'win');
const toWin = (p) => `Z:${resolve(p).replaceAll('/', '\\')}`;

function log(msg) { process.stderr.write(`[strata test win32-x64] ${msg}\n`); }

mkdirSync(out, { recursive: true });
// suite.ts: the engine; agent.ts: the agent's commands and paths.
const suites = ['suite', 'agent'];
await build({
  entryPoints: suites.map((name) => ({ in: join(root, 'test', 'emulated', 'win', `${name}.ts`), out: name })), outdir: out, outExtension: { '.js': '.mjs' },
  platform: 'node', format: 'esm', target: 'node20', bundle: true, logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
// The engine process runs dist/engine-host.mjs: the product's bundles.
const bundled = spawnSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
if (bundled.status !== 0) process.exit(1);

const env = {
  ...process.env,
  WINEPREFIX: process.env.WINEPREFIX ?? join(cacheRoot, 'wine'),
  WINEDEBUG: process.env.WINEDEBUG ?? '-all',
  // No Mono or Gecko install prompts in a fresh prefix.
  WINEDLLOVERRIDES: 'mscoree,mshtml=',
  STRATA_ADDON: toWin(addon),
  // Test models and CPU-probe verdicts in the host's cache, seen through Z:.
  STRATA_CACHE_DIR: toWin(cacheRoot),
};
if (!existsSync(join(env.WINEPREFIX, '.strata-win10'))) {
  log(`preparing the Wine prefix ${env.WINEPREFIX} (once)`);
  const r = spawnSync('wine', ['winecfg', '/v', 'win10'], { env, stdio: 'ignore' });
  if (r.status !== 0) { log('wine winecfg /v win10 failed'); process.exit(1); }
  writeFileSync(join(env.WINEPREFIX, '.strata-win10'), '');
}

const stdoutFile = join(out, 'stdout.txt');
const stderrFile = join(out, 'stderr.txt');
for (const f of [stdoutFile, stderrFile]) rmSync(f, { force: true });
const fds = [openSync(stdoutFile, 'w'), openSync(stderrFile, 'w')];
const started = Date.now();
const child = spawn('wine', [nodeExe, '--test-reporter=spec', '--test', ...suites.map((name) => toWin(join(out, `${name}.mjs`)))],
  { env, cwd: root, stdio: ['ignore', fds[0], fds[1]] });

const offsets = new Map([[stdoutFile, 0], [stderrFile, 0]]);
function pump() {
  for (const [file, at] of offsets) {
    if (!existsSync(file)) continue;
    const size = statSync(file).size;
    if (size <= at) continue;
    const fd = openSync(file, 'r');
    const buf = Buffer.alloc(size - at);
    readSync(fd, buf, 0, buf.length, at);
    closeSync(fd);
    offsets.set(file, size);
    (file === stdoutFile ? process.stdout : process.stderr).write(buf);
  }
}
const timer = setInterval(pump, 500);
child.on('exit', (code, signal) => {
  clearInterval(timer);
  for (const fd of fds) closeSync(fd);
  pump();
  log(`suite ended (${signal ?? `exit code ${code}`}) in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(code ?? 1);
});
