// The managed server's context when strata.contextSize is automatic (0): no --ctx, so the chat
// model's slots share the server's default context (the training context where memory allows);
// on the CPU the other models keep a small context per slot, as the server reads the arguments and
// the --config file's "models" section.
import { describe, expect, it } from 'vitest';
import {
  buildServeArgs, contextPlan, COMPLETION_CTX, DEFAULT_SETTINGS, modelsSection, settingsProblems,
  type ServerSettings,
} from '../../extension/config/server-settings.js';
import { parseArgs } from '../../backend/args/args.js';
import { resolveConfig } from '../../backend/app/config.js';

const two: ServerSettings = { ...DEFAULT_SETTINGS, modelPath: '/m/coder-1.5b.gguf', chatModel: '/m/coder-7b-instruct.gguf' };

/** The server's view of the arguments (and the config file they name). */
function served(s: ServerSettings): Array<{ name: string; ctx: number | null; slots: number; mmproj?: string }> {
  const file = '/storage/serve-models.json';
  const args = buildServeArgs(s, 1, file);
  const parsed = parseArgs(args.slice(1));
  const section = modelsSection(s);
  const cfg = resolveConfig({ flags: parsed.options, repeated: parsed.repeated!, env: {}, readFile: (p) => { expect(p).toBe(file); return JSON.stringify(section); } });
  return cfg.models.map((m) => ({
    name: m.name, ctx: m.settings.ctx ?? cfg.ctx ?? null, slots: m.settings.slots ?? cfg.slots, ...(m.settings.mmproj ? { mmproj: m.settings.mmproj } : {}),
  }));
}

describe('the chat model projector (strata.chatModelProjector)', () => {
  it('goes to the chat model alone, in its entry of the models section', () => {
    expect(served({ ...two, chatModelProjector: '/m/mmproj-7b.gguf' })).toEqual([
      { name: 'coder-1.5b', ctx: COMPLETION_CTX, slots: 4 },
      { name: 'coder-7b-instruct', ctx: null, slots: 4, mmproj: '/m/mmproj-7b.gguf' },
    ]);
  });

  it('with one model for everything, and with a context the user set (no section of its own otherwise)', () => {
    expect(served({ ...DEFAULT_SETTINGS, modelPath: '/m/vl.gguf', chatModelProjector: '/m/mmproj.gguf' }))
      .toEqual([{ name: 'vl', ctx: null, slots: 4, mmproj: '/m/mmproj.gguf' }]);
    expect(served({ ...two, contextSize: 6000, chatModelProjector: '/m/p.gguf' })[1]).toEqual({ name: 'coder-7b-instruct', ctx: 6000, slots: 4, mmproj: '/m/p.gguf' });
    expect(modelsSection({ ...two, contextSize: 6000 })).toBeNull();
  });

  it('is not passed for a chat model the managed server does not serve from a file (the demo model)', () => {
    expect(modelsSection({ ...DEFAULT_SETTINGS, chatModelProjector: '/m/p.gguf' })).toBeNull();
  });
});

describe('automatic context', () => {
  it('is the default, and a value the user sets goes to every model as --ctx', () => {
    expect(DEFAULT_SETTINGS.contextSize).toBe(0);
    expect(settingsProblems(DEFAULT_SETTINGS)).toEqual([]);
    expect(settingsProblems({ ...DEFAULT_SETTINGS, contextSize: 10 })).toEqual(["strata.contextSize must be a whole number from 16 to 16777216 (is 10)"]);
    expect(contextPlan({ ...two, contextSize: 6000 })).toEqual({ ctx: 6000, section: null });
    expect(served({ ...two, contextSize: 6000 })).toEqual([{ name: 'coder-1.5b', ctx: 6000, slots: 4 }, { name: 'coder-7b-instruct', ctx: 6000, slots: 4 }]);
  });

  it('where the fit can choose (fit on, a GPU device), no --ctx is passed', () => {
    for (const s of [{ ...two, fit: 'on' as const }, { ...two, devices: ['CUDA0'] }, { ...DEFAULT_SETTINGS, devices: ['Vulkan0'] }]) {
      expect(contextPlan(s)).toEqual({ ctx: null, section: null });
      expect(buildServeArgs(s, 1, '/f')).not.toContain('--ctx');
      expect(buildServeArgs(s, 1, '/f')).not.toContain('--config');
    }
  });

  it('on the CPU, a separate chat model gets the shared context, completions a small one per slot', () => {
    expect(served(two)).toEqual([
      { name: 'coder-1.5b', ctx: COMPLETION_CTX, slots: 4 },
      { name: 'coder-7b-instruct', ctx: null, slots: 4 },
    ]);
    expect(buildServeArgs(two, 1, '/f')).not.toContain('--ctx');
    expect(served({ ...two, devices: ['CPU'] })[1]).toEqual({ name: 'coder-7b-instruct', ctx: null, slots: 4 });
  });

  it('on the CPU, one model for chat and completions gets the shared context on strata.slots slots', () => {
    expect(served({ ...DEFAULT_SETTINGS, modelPath: '/m/coder.gguf' })).toEqual([{ name: 'coder', ctx: null, slots: 4 }]);
    expect(buildServeArgs({ ...DEFAULT_SETTINGS, modelPath: '/m/coder.gguf' }, 1, '/f')).not.toContain('--config');
    expect(buildServeArgs({ ...DEFAULT_SETTINGS, modelPath: '/m/coder.gguf' }, 1, '/f')).not.toContain('--ctx');
  });
});
