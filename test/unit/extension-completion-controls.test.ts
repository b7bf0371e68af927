import { describe, expect, it } from 'vitest';
import { CompletionGate, SNOOZE_MS, type PauseState } from '../../extension/completion/pause.js';
import { statusMenuEntries } from '../../extension/status/menu-entries.js';
import { statusBarText } from '../../extension/status/status-text.js';
import type { Metrics } from '../../contract/metrics.js';

function gate(start: Partial<PauseState> = {}) {
  let state: PauseState = { workspace: false, languages: [], snoozeUntil: null, ...start };
  const clock = { now: 1_000_000 };
  const g = new CompletionGate({ get: () => state, set: async (s) => { state = s; } }, () => clock.now);
  let changes = 0;
  g.onChange(() => changes++);
  return { g, clock, state: () => state, changes: () => changes };
}

describe('pausing inline completions', () => {
  it('pauses for the workspace until resumed; asking explicitly still works', async () => {
    const { g, changes } = gate();
    expect(g.allows('python', false)).toBe(true);
    await g.pauseWorkspace();
    expect(g.allows('python', false)).toBe(false);
    expect(g.allows('python', true)).toBe(true);
    expect(g.reason('python')).toBe('paused for this workspace');
    await g.resume();
    expect(g.allows('python', false)).toBe(true);
    expect(changes()).toBe(2);
  });

  it('pauses one language only', async () => {
    const { g, state } = gate();
    await g.pauseLanguage('markdown');
    await g.pauseLanguage('markdown');
    expect(state().languages).toEqual(['markdown']);
    expect([g.allows('markdown', false), g.allows('python', false)]).toEqual([false, true]);
    expect(g.reason('markdown')).toBe('paused for markdown');
    expect(g.reason()).toBeNull();
    await g.resume('markdown');
    expect(g.allows('markdown', false)).toBe(true);
  });

  it('snoozes for 30 minutes, then completions come back by themselves', async () => {
    const { g, clock } = gate();
    await g.snooze();
    expect(g.allows('ts', false)).toBe(false);
    expect(g.reason()).toMatch(/^snoozed until /);
    expect(g.snoozeEnds()).toBe(1_000_000 + SNOOZE_MS);
    clock.now += SNOOZE_MS + 1;
    expect(g.allows('ts', false)).toBe(true);
    expect(g.snoozeEnds()).toBeNull();
  });
});

describe('the Strata status bar menu', () => {
  const labels = (e: ReturnType<typeof statusMenuEntries>) => e.map((x) => ('separator' in x ? `--${x.separator}` : x.command));
  it('offers pause, language pause, snooze and the server actions that fit the state', () => {
    expect(labels(statusMenuEntries('ready', null, 'python', false))).toEqual([
      '--Inline completions and next edits', 'strata.pauseCompletions', 'strata.pauseCompletionsForLanguage', 'strata.snoozeCompletions', 'strata.triggerCompletion',
      '--Server', 'strata.stopServer', 'strata.restartServer', 'strata.selectModel', 'strata.openPanel', 'strata.showLog',
    ]);
    expect(labels(statusMenuEntries('stopped', 'paused for this workspace', undefined, false))).toEqual([
      '--Inline completions and next edits', 'strata.resumeCompletions', 'strata.triggerCompletion', '--Server', 'strata.startServer', 'strata.selectModel', 'strata.openPanel', 'strata.showLog',
    ]);
    const lang = statusMenuEntries('ready', null, 'python', true);
    expect(lang.find((x) => 'command' in x && x.command === 'strata.resumeCompletionsForLanguage')).toMatchObject({ label: '$(debug-start) Resume Completions for python', args: ['python'] });
  });
});

describe('status bar text and tooltip', () => {
  const m = (busy: number, tokS: number | null): Metrics => ({
    state: 'ok', queued: 1, admitting: 0, running: busy, finishing: 0,
    slots: [{ slot: 0, replica: 0, state: busy ? 'decode' : 'idle', heldTokens: 10, requestId: null, tokS }, { slot: 1, replica: 0, state: 'idle', heldTokens: 0, requestId: null, tokS: null }],
    requests: [{ id: '1', time: null, durationMs: null, finish: 'stop', promptTokens: 3, reusedTokens: 0, outputTokens: 5, promptMs: 1, decodeMs: 1, decodeTokS: 31.25 }],
    totals: {}, cache: { parked: 0, bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0 }, engines: [], staleFrames: 0,
  });
  const base = { busy: false, mode: 'managed' as const, model: 'tiny', url: 'http://127.0.0.1:5000', message: null };
  it('shows slots, speed, the last completion latency and the pause in the tooltip', () => {
    expect(statusBarText({ ...base, state: 'ready' }, m(0, null), { lastLatencyMs: 183.4, paused: null })).toEqual({
      text: '$(pulse) Strata: busy · tiny',
      tooltip: 'Strata server at http://127.0.0.1:5000 is generating\nSlots: 0 of 2 busy, 1 queued\nSpeed: 31.3 tok/s (last request)\nLast completion: 183 ms\nInline completions: on\nClick for Strata actions.',
    });
    const paused = statusBarText({ ...base, state: 'ready' }, { ...m(1, 12), queued: 0 }, { lastLatencyMs: null, paused: 'paused for python' });
    expect(paused.text).toBe('$(pulse) Strata: busy · tiny · 12.0 tok/s $(debug-pause)');
    expect(paused.tooltip.split('\n').slice(1)).toEqual(['Slots: 1 of 2 busy', 'Speed: 12.0 tok/s now', 'Inline completions: paused for python', 'Click for Strata actions.']);
  });
});
