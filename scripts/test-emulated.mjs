#!/usr/bin/env node
// Runs the emulated test suites of the other platforms:
//
//   node scripts/test-emulated.mjs linux-arm64 [vitest args]   (npm run test:arm64)
//   node scripts/test-emulated.mjs win32-x64                   (npm run test:win)
//
// Both cross-build the native engine for the platform (scripts/build-native.mjs --platform, into
// native/build-<platform>/; cached), fetch that platform's Node (scripts/emulated-node.mjs; cached)
// and run the tests on it: linux-arm64 under qemu-user (a subset of the engine, server and
// integration suites through vitest.arm64.config.ts), win32-x64 under Wine (test/emulated/win/).
// Needs (Debian): qemu-user-static and g++-aarch64-linux-gnu; wine64 and g++-mingw-w64-x86-64-posix.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crossTools, defaultOut, setPlatform } from './build-native.mjs';
import { ensureEmulatedNode } from './emulated-node.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const platform = process.argv[2];
const rest = process.argv.slice(3);

function log(msg) { process.stderr.write(`[strata test ${platform}] ${msg}\n`); }
function fail(msg) { log(msg); process.exit(1); }
function onPath(cmd) { return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0; }

if (!['linux-arm64', 'win32-x64'].includes(platform)) fail(`usage: test-emulated.mjs linux-arm64|win32-x64 [args]`);

/**
 * The kernel runs arm64 executables through qemu-user only with a binfmt_misc entry; the tests
 * spawn engine processes with process.execPath, so the worker's children need it too. Debian's
 * qemu-user-static ships the entry (/usr/lib/binfmt.d); systemd or binfmt-support load it at
 * boot, and here it is loaded when missing (root only).
 */
function ensureBinfmt() {
  const dir = '/proc/sys/fs/binfmt_misc';
  if (existsSync(join(dir, 'qemu-aarch64'))) return;
  const conf = '/usr/lib/binfmt.d/qemu-aarch64.conf';
  if (!existsSync(conf)) fail(`no ${conf}: install qemu-user-static (Debian: apt install qemu-user-static)`);
  try {
    if (!existsSync(join(dir, 'register'))) execFileSync('mount', ['-t', 'binfmt_misc', 'binfmt_misc', dir], { stdio: 'inherit' });
    writeFileSync(join(dir, 'register'), readFileSync(conf, 'utf8').trim());
    log('registered qemu-aarch64 with binfmt_misc');
  } catch (err) {
    fail(`cannot register qemu-aarch64 with binfmt_misc (${err.message.split('\n')[0]}); as root: ` +
      `mount -t binfmt_misc binfmt_misc ${dir}; cat ${conf} > ${dir}/register`);
  }
}

function buildNative() {
  const started = Date.now();
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-native.mjs'), '--platform', platform], { stdio: 'inherit' });
  if (r.status !== 0) fail('the native build failed');
  log(`native build ready in ${Math.round((Date.now() - started) / 1000)} s: ${defaultOut(platform)}`);
}

setPlatform(platform);
const { compiler, pkg } = crossTools();
const needs = [platform === 'linux-arm64' ? ['qemu-aarch64-static', 'qemu-user-static'] : ['wine', 'wine64'], [compiler, pkg]];
const missing = needs.filter(([cmd]) => !onPath(cmd)).map(([, pkg]) => pkg);
if (missing.length) fail(`missing Debian packages: ${missing.join(' ')} (apt install ${missing.join(' ')})`);

buildNative();
const node = ensureEmulatedNode(platform);
const addon = join(defaultOut(platform), 'strata.node');
const started = Date.now();
let status;
if (platform === 'linux-arm64') {
  ensureBinfmt();
  const env = {
    ...process.env,
    STRATA_EMULATED_NODE: node,
    STRATA_ADDON: addon,
    // Where qemu-user finds the arm64 loader and libc (from the cross toolchain's libc6-arm64-cross).
    QEMU_LD_PREFIX: process.env.QEMU_LD_PREFIX ?? '/usr/aarch64-linux-gnu',
  };
  status = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '-c', 'vitest.arm64.config.ts', ...rest],
    { stdio: 'inherit', env, cwd: root }).status;
} else {
  status = spawnSync(process.execPath, [join(root, 'test', 'emulated', 'win', 'run.mjs'), node, addon, ...rest],
    { stdio: 'inherit', cwd: root }).status;
}
log(`tests took ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(status ?? 1);
