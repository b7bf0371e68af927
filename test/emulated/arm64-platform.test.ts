// The first file of the linux-arm64 suite: that it really runs on arm64, on the cross-built engine,
// and that the engine picks one of the build's CPU libraries with its run-time probe.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addonPath, loadAddon } from '../../backend/addon/loader.js';

describe('linux-arm64 under emulation', () => {
  it('runs on an arm64 Node with the linux-arm64 build of the engine', () => {
    expect(process.arch).toBe('arm64');
    expect(process.platform).toBe('linux');
    const manifest = JSON.parse(readFileSync(join(dirname(addonPath()), 'build-manifest.json'), 'utf8')) as { platform: string };
    expect(manifest.platform).toBe('linux-arm64');
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
