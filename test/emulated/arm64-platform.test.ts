// The first file of the linux-arm64 suite: that it really runs on arm64, on the cross-built engine,
// and that the engine picks one of the build's CPU libraries with its run-time probe.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addonPath, loadAddon } from '../../backend/addon/loader.js';

interface Manifest { platform: string; flags: Record<string, string> }
const manifest = (): Manifest => JSON.parse(readFileSync(join(dirname(addonPath()), 'build-manifest.json'), 'utf8')) as Manifest;

describe('linux-arm64 under emulation', () => {
  it('runs on an arm64 Node with the linux-arm64 build of the engine', () => {
    expect(process.arch).toBe('arm64');
    expect(process.platform).toBe('linux');
    expect(manifest().platform).toBe('linux-arm64');
  });

  // The package's build (every variant, clang); CI runs the baseline build (one armv8-a library).
  it.runIf(manifest().flags.GGML_CPU_ALL_VARIANTS === 'ON')('a build of every variant holds ggml\'s eight Linux Arm CPU libraries', () => {
    const variants = loadAddon().cpuVariants();
    expect(variants.map((v) => v.name).sort()).toEqual(['armv8.0_1', 'armv8.2_1', 'armv8.2_2', 'armv8.2_3', 'armv8.6_1', 'armv8.6_2', 'armv9.2_1', 'armv9.2_2']);
    // qemu-user's CPU ("max") has every Arm feature: SVE2 and SME included.
    expect(variants[0]!.name).toBe('armv9.2_2');
  });

  it('lists the CPU libraries of the build and loads the one ggml scores best for this CPU', () => {
    const addon = loadAddon();
    const variants = addon.cpuVariants();
    expect(variants.length).toBeGreaterThan(0);
    const best = variants[0]!;
    expect(best.score).toBeGreaterThan(0);
    const report = addon.loadBackends();
    expect(report.cpuVariant).toBe(best.name);
    expect(report.loaded.map((b) => b.name)).toContain('CPU');
  });
});
