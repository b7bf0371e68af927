// One table of settings: the VS Code settings that become `strata serve` flags take their range and
// enum from the server's option table (serve-options.ts), so the settings editor, the extension's
// own check (settingsProblems) and the server agree on what a value may be.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { envOf, SERVE_OPTIONS } from '../../backend/app/serve-options.js';
import { API_KEY_ENV } from '../../extension/server/managed-launch.js';
import { KV_TYPES } from '../../contract/kv-types.js';
import { buildServeArgs, DEFAULT_SETTINGS, MIN_CONTEXT, settingsProblems } from '../../extension/config/server-settings.js';

const PROPS = pkg.contributes.configuration.properties as Record<string, { minimum?: number; maximum?: number; enum?: string[]; default?: unknown }>;
/** Setting (without `strata.`) -> the serve option it becomes. */
const FLAGS: Record<string, keyof typeof SERVE_OPTIONS> = {
  slots: 'slots', contextSize: 'ctx', kvType: 'kvType', parkMiB: 'parkMib', replicas: 'replicas', fit: 'fit',
  splitMode: 'splitMode', port: 'port',
};

describe('settings that become serve flags', () => {
  it.each(Object.entries(FLAGS))('strata.%s has the range or the values of its flag (%s)', (setting, option) => {
    const p = PROPS[`strata.${setting}`]!;
    const kind = SERVE_OPTIONS[option].kind as { t: string; min?: number; max?: number; values?: readonly string[] };
    // strata.contextSize 0 means "chosen for the work" (no --ctx); any other value is the server's.
    if (kind.t === 'int' && setting === 'contextSize') expect({ min: p.minimum, least: MIN_CONTEXT, max: p.maximum }).toEqual({ min: 0, least: kind.min, max: kind.max });
    else if (kind.t === 'int') expect({ min: p.minimum, max: p.maximum }).toEqual({ min: kind.min, max: kind.max });
    // '' in a setting's enum means "unset: the server decides".
    if (kind.t === 'enum') expect(p.enum!.filter((v) => v !== '')).toEqual([...kind.values!]);
  });

  it('a setting passed only when set shows, as its default, what the server does without it', () => {
    // slots: the serve option's default; the KV type and the park budget: the engine's (EngineOptions in C++).
    const engine = readFileSync(join(import.meta.dirname, '../../native/src/engine_options.h'), 'utf8');
    const kv = /ggml_type kv_type = GGML_TYPE_(\w+);/.exec(engine)?.[1]?.toLowerCase();
    const park = Number(/double park_budget_mib = (\d+);/.exec(engine)?.[1]);
    expect(SERVE_OPTIONS.kvType.default).toBeNull();
    expect(SERVE_OPTIONS.parkMib.default).toBeNull();
    expect([PROPS['strata.slots']!.default, PROPS['strata.kvType']!.default, PROPS['strata.parkMiB']!.default]).toEqual([SERVE_OPTIONS.slots.default, kv, park]);
    expect([DEFAULT_SETTINGS.slots, DEFAULT_SETTINGS.kvType, DEFAULT_SETTINGS.parkMiB]).toEqual([null, null, null]);
  });

  it('the KV types are the one list', () => {
    expect(PROPS['strata.kvType']!.enum).toEqual([...KV_TYPES]);
    expect((SERVE_OPTIONS.kvType.kind as { values: readonly string[] }).values).toEqual([...KV_TYPES]);
  });

  it('the extension refuses what the server would, at the same bounds', () => {
    const ctx = SERVE_OPTIONS.ctx.kind as { min: number; max: number };
    expect(settingsProblems({ ...DEFAULT_SETTINGS, contextSize: ctx.max })).toEqual([]);
    expect(settingsProblems({ ...DEFAULT_SETTINGS, contextSize: ctx.max + 1 })).toEqual([`strata.contextSize must be a whole number from ${ctx.min} to ${ctx.max} (is ${ctx.max + 1})`]);
    expect(settingsProblems({ ...DEFAULT_SETTINGS, contextSize: ctx.min - 1 })).toHaveLength(1);
    expect(settingsProblems({ ...DEFAULT_SETTINGS, contextSize: 0 })).toEqual([]);
    const cache = SERVE_OPTIONS.parkMib.kind as { min: number; max: number };
    expect(settingsProblems({ ...DEFAULT_SETTINGS, parkMiB: cache.max + 1 })).toHaveLength(1);
  });

  it('the managed server\'s key travels in the variable the server reads', () => {
    expect(API_KEY_ENV).toBe(envOf('apiKey'));
  });

  it('every flag the extension passes is a serve option', () => {
    const args = buildServeArgs({ ...DEFAULT_SETTINGS, replicas: 2, devices: ['CPU'], splitMode: 'layer', tensorSplit: [1], rpcServers: ['h:1'], fit: 'on' }, 1234);
    const kebab = (k: string): string => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const known = new Set(Object.keys(SERVE_OPTIONS).map((k) => `--${kebab(k)}`));
    expect(args.filter((a) => a.startsWith('--') && !known.has(a))).toEqual([]);
  });
});
