import { describe, expect, it } from 'vitest';
import type { Metrics } from '../../contract/metrics.js';
import { benchFigures, benchRun, BenchStore, unitFor } from '../../extension/bench/bench-results.js';
import { makeNonce, panelHtml } from '../../extension/panel/html.js';
import { statusBarText } from '../../extension/status/status-text.js';
import { validateFromWebview } from '../../contract/panel.js';

describe('panel HTML', () => {
  it('allows only nonce scripts and the extension\'s own styles and images', () => {
    const nonce = makeNonce();
    // Every nonce, not most: a shorter one now and then was the bug this guards.
    for (let i = 0; i < 5000; i++) expect(makeNonce()).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(makeNonce()).not.toBe(nonce);
    const html = panelHtml({ cspSource: 'vscode-resource:', nonce, scriptUri: 'vscode-resource:/dist/webview.js', styleUris: ['vscode-resource:/dist/codicons/codicon.css', 'vscode-resource:/media/panel.css'], title: 'Strata <x>' });
    const csp = /content="([^"]+)"/.exec(html)![1]!;
    expect(csp.split('; ')).toEqual([
      "default-src 'none'", 'style-src vscode-resource:', 'img-src vscode-resource: data:', 'font-src vscode-resource:',
      `script-src 'nonce-${nonce}'`, "connect-src 'none'", "form-action 'none'", "base-uri 'none'",
    ]);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain(`<script nonce="${nonce}" src="vscode-resource:/dist/webview.js">`);
    expect(html).toContain('<title>Strata &lt;x&gt;</title>');
    expect(html).toContain('<link rel="stylesheet" href="vscode-resource:/dist/codicons/codicon.css">');
    expect(html).not.toMatch(/https?:/);
  });
});

describe('webview message validation', () => {
  it('accepts well-formed messages and names the problem otherwise', () => {
    expect(validateFromWebview({ type: 'tab', tab: 'kv' }).ok).toBe(true);
    expect(validateFromWebview({ type: 'tab', tab: 'x' })).toEqual({ ok: false, reason: 'unknown tab x' });
    expect(validateFromWebview({ type: 'sessionDelete', name: '  ' })).toEqual({ ok: false, reason: `session name: may contain only letters, digits, '.', '_' and '-' (found " ")` });
    expect(validateFromWebview({ type: 'sessionDelete', name: 'a\u0000b' }).ok).toBe(false);
    expect(validateFromWebview({ type: 'command', command: 'rm -rf' })).toEqual({ ok: false, reason: 'unknown command rm -rf' });
    expect(validateFromWebview(null)).toEqual({ ok: false, reason: 'message is not an object' });
  });
});

describe('bench results', () => {
  it('uses an explicit figures list', () => {
    expect(benchFigures({ figures: [{ name: 'decode', value: 41.5, unit: 'tok/s' }, { name: 'ttft_ms', value: 80 }, { name: 'bad', value: 'x' }] }))
      .toEqual([{ name: 'decode', value: 41.5, unit: 'tok/s' }, { name: 'ttft_ms', value: 80, unit: 'ms' }]);
  });
  it('flattens other layouts into named figures with units, skipping bookkeeping numbers', () => {
    const f = benchFigures({ time: 1700000000, url: 'x', results: [{ name: 'strata', decode_tok_s: 20, ttft_ms: 55 }, { name: 'llama-server', decode_tok_s: 18 }], ratio: 1.11 });
    expect(f).toEqual([
      { name: 'results.strata.decode_tok_s', value: 20, unit: 'tok/s' },
      { name: 'results.strata.ttft_ms', value: 55, unit: 'ms' },
      { name: 'results.llama-server.decode_tok_s', value: 18, unit: 'tok/s' },
      { name: 'ratio', value: 1.11, unit: '×' },
    ]);
    expect(unitFor('prompt_tokens_per_second')).toBe('tok/s');
  });
  it('reads the strata bench report: one figure per summary row (its median)', () => {
    const report = {
      format: 'strata-bench/1', model: 'tiny', url: 'http://x',
      summary: [
        { scenario: 'single', key: 'ttft_ms', label: 'TTFT', unit: 'ms', better: 'lower', values: [10, 12], n: 2, median: 11, min: 10, max: 12 },
        { scenario: 'parallel', key: 'agg_tok_s', label: 'aggregate decode', unit: 'tok/s', better: 'higher', values: [], n: 0, median: null, min: 0, max: 0 },
      ],
      records: [{ result: { figures: { ttft_ms: 10 } } }],
    };
    expect(benchFigures(report)).toEqual([{ key: 'ttft_ms', name: 'single: TTFT', value: 11, unit: 'ms', better: 'lower' }]);
    expect(benchRun(report, 'u', 5, null).model).toBe('tiny');
  });
  it('keeps the last runs', async () => {
    const data = new Map<string, unknown>();
    const store = new BenchStore({ get: <T>(k: string) => data.get(k) as T | undefined, update: async (k, v) => { data.set(k, v); } }, 2);
    for (const t of [1, 2, 3]) await store.add(benchRun({ figures: [{ name: 'x', value: t }] }, 'u', t, null));
    expect(store.runs().map((r) => r.time)).toEqual([2, 3]);
    await store.clear();
    expect(store.runs()).toEqual([]);
  });
});

describe('status bar text', () => {
  const base = { busy: false, mode: 'managed' as const, model: 'tiny', url: 'http://127.0.0.1:5', message: null };
  const m = (running: number, tokS: number | null): Metrics => ({
    state: 'ok', queued: 0, admitting: 0, running, finishing: 0,
    slots: [{ slot: 0, replica: 0, state: 'decode', heldTokens: 5, requestId: '1', tokS }], requests: [], totals: {},
    cache: { parked: 0, bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0 }, engines: [], staleFrames: 0,
  });
  it('shows each state, the model and live tok/s while busy', () => {
    expect(statusBarText({ ...base, state: 'stopped' }, undefined).text).toBe('$(circle-slash) Strata: stopped');
    expect(statusBarText({ ...base, state: 'starting' }, undefined).text).toBe('$(loading~spin) Strata: loading');
    expect(statusBarText({ ...base, state: 'ready' }, m(0, null)).text).toBe('$(check) Strata: ready · tiny');
    expect(statusBarText({ ...base, state: 'ready', busy: true }, m(1, 23.45)).text).toBe('$(pulse) Strata: busy · tiny · 23.4 tok/s');
    expect(statusBarText({ ...base, state: 'ready' }, m(1, null)).text).toBe('$(pulse) Strata: busy · tiny');
    expect(statusBarText({ ...base, state: 'failed', message: 'port 8080 is already in use' }, undefined).tooltip).toBe('Strata server failed: port 8080 is already in use');
    const dead = { ...m(0, null), engines: [{ replica: 1, epoch: 2, pid: null, alive: false, restarts: 3, devices: [] }] };
    expect(statusBarText({ ...base, state: 'ready' }, dead)).toEqual({
      text: '$(warning) Strata: engine restarting · tiny',
      tooltip: 'Strata: engine replica 1 (restarts 3) is down; the server is restarting it. Requests on it fail until it is back. See "Strata: Show Log".',
    });
  });
});
