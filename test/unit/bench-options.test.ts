import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../backend/args/args.js';
import { parseStat } from '../../tools/bench-compare/launch.js';
import { settingsFromArgs } from '../../backend/bench/options.js';
import { parseScenarios } from '../../backend/bench/runner.js';
import { defaultSettings } from '../../backend/bench/types.js';

describe('bench options', () => {
  it('takes scenario settings from flags and keeps the defaults otherwise', () => {
    const s = settingsFromArgs(parseArgs(['--gen', '32', '--prefill-sizes', '256,1024', '--clients', '2', '--timeout', '5']));
    expect(s.singleGen).toBe(32);
    expect(s.prefillSizes).toEqual([256, 1024]);
    expect(s.concurrentClients).toEqual([2]);
    expect(s.requestTimeoutMs).toBe(5000);
    expect(s.repeatTokens).toBe(defaultSettings.repeatTokens);
  });

  it('names the bad flag', () => {
    expect(() => settingsFromArgs(parseArgs(['--prefill-sizes', '512,abc']))).toThrow(/--prefill-sizes: 'abc'/);
    expect(() => settingsFromArgs(parseArgs(['--gen', '1']))).toThrow(UsageError);
    expect(() => settingsFromArgs(parseArgs(['--clients', ',']))).toThrow(/--clients needs at least one/);
  });

  it('parses scenario lists, all by default, and rejects unknown names', () => {
    expect(parseScenarios(undefined)).toEqual(['single', 'prefill', 'concurrent', 'repeat', 'mixed', 'side', 'infill', 'typing', 'session', 'conversations', 'edit', 'nextedit']);
    expect(parseScenarios(['mixed', 'single', 'mixed'])).toEqual(['mixed', 'single']);
    expect(() => parseScenarios(['single', 'warp'])).toThrow(/unknown scenario 'warp'/);
  });

  it('reads pgrp, utime and stime from /proc stat lines, also with odd command names', () => {
    const line = '4242 (llama server) (x)) S 1 4240 4240 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 3 0 1000 0 0';
    expect(parseStat(line)).toEqual({ pgrp: 4240, utime: 250, stime: 30 });
    expect(parseStat('garbage')).toBeNull();
  });
});
