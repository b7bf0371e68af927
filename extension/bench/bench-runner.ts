// "Strata: Run Benchmark": pick what to run (a preset with its estimate, chosen scenarios, or a
// comparison with another server), run `strata bench --url <server> --json FILE` with the editor's
// runtime, show progress (done of total, what runs, time left) in the notification and the Bench
// tab, and store the figures (with the comparison server's, when there was one).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import { API_KEY_ENV } from '../server/managed-launch.js';
import { spawnNodeScript } from '../server/node-process.js';
import type { BenchView } from '../../contract/bench.js';
import { benchFigures, benchRun, BenchStore } from './bench-results.js';
import { estimate, formatSeconds, SCENARIOS, type BenchPlan } from './bench-plan.js';
import { BenchProgressTracker } from './bench-progress.js';

export interface BenchController {
  view(): BenchView;
  clear(): Promise<void>;
}

type PlanItem = vscode.QuickPickItem & { plan?: Omit<BenchPlan, 'baselineUrl'>; choose?: 'scenarios' | 'compare' };

const ALL = SCENARIOS.map((s) => s.name);

/** Asks what to run; undefined when the user cancelled. */
async function choosePlan(url: string, history: BenchView['runs'], compare = false): Promise<BenchPlan | undefined> {
  const est = (p: Omit<BenchPlan, 'baselineUrl'>): string => {
    const e = estimate({ ...p, baselineUrl: compare ? 'x' : null }, url, history);
    return `~${formatSeconds(e.seconds)}${e.measured ? '' : ' (typical on the demo model)'}`;
  };
  const presets: Array<[string, Omit<BenchPlan, 'baselineUrl'>, string]> = [
    ['Quick', { scenarios: ['single'], runs: 1 }, 'one request: TTFT and decode tok/s'],
    ['Standard', { scenarios: ALL, runs: 1 }, 'every scenario once'],
    ['Full', { scenarios: ALL, runs: 3 }, 'every scenario 3 times, medians'],
  ];
  const items: PlanItem[] = [
    ...presets.map(([label, plan, detail]) => ({ label, description: est(plan), detail, plan })),
    { label: 'Choose Scenarios…', detail: ALL.join(', '), choose: 'scenarios' as const },
    ...(compare ? [] : [{ label: 'Compare With Another Server…', detail: 'the same scenarios against another OpenAI-compatible server (e.g. llama-server), side by side', choose: 'compare' as const }]),
  ];
  const pick = await vscode.window.showQuickPick(items, { title: compare ? 'Strata benchmark: what to compare' : 'Strata benchmark: what to run', placeHolder: `Benchmark ${url}` });
  if (!pick) return undefined;
  if (pick.plan) return { ...pick.plan, baselineUrl: null };
  if (pick.choose === 'compare') {
    const other = await vscode.window.showInputBox({
      title: 'Compare with another server', prompt: 'Base URL of an OpenAI-compatible server serving a comparable model',
      placeHolder: 'http://127.0.0.1:8080', ignoreFocusOut: true,
      validateInput: (v) => (/^https?:\/\/[^/\s]+/.test(v.trim()) ? null : 'an http:// or https:// URL'),
    });
    if (!other) return undefined;
    const plan = await choosePlan(url, history, true);
    return plan && { ...plan, baselineUrl: other.trim() };
  }
  const chosen = await vscode.window.showQuickPick(SCENARIOS.map((s) => ({ label: s.name, detail: s.measures, picked: s.name === 'single' })), { canPickMany: true, title: 'Scenarios to run' });
  if (!chosen?.length) return undefined;
  const runs = await vscode.window.showQuickPick([{ label: '1', description: 'quick' }, { label: '3', description: 'medians, min-max' }, { label: '5', description: 'for noisy machines' }], { title: 'Runs of each scenario' });
  if (!runs) return undefined;
  // The comparison's URL is filled in by the caller that asked for it.
  return { scenarios: chosen.map((c) => c.label), runs: Number(runs.label), baselineUrl: null };
}

export function registerBenchmark(context: vscode.ExtensionContext, server: ServerConnection, log: vscode.LogOutputChannel, onChange: (v: BenchView) => void, showBenchTab: () => void): BenchController {
  const store = new BenchStore(context.globalState);
  let state: Omit<BenchView, 'runs'> = { running: false, progress: null, error: null };
  const view = (): BenchView => ({ runs: store.runs(), ...state });
  const set = (s: Partial<BenchView>): void => { state = { ...state, ...s }; onChange(view()); };

  context.subscriptions.push(vscode.commands.registerCommand('strata.runBenchmark', async () => {
    if (state.running) return void vscode.window.showInformationMessage('Strata: a benchmark is already running.');
    let client;
    try { client = await server.ensureReady(); } catch { return; }
    const plan = await choosePlan(client.baseUrl, store.runs());
    if (!plan) return;
    const cli = join(context.extensionPath, 'dist', 'strata.mjs');
    const dir = mkdtempSync(join(tmpdir(), 'strata-bench-'));
    const startedAt = Date.now();
    const tracker = new BenchProgressTracker(plan, client.baseUrl, store.runs(), startedAt);
    showBenchTab();
    set({ running: true, progress: tracker.view(), error: null });
    // The key goes in the environment, not on the command line other users can read.
    const key = client.apiKey;
    const argsFor = (url: string, out: string): string[] => [
      'bench', '--url', url, '--json', out, '--scenarios', plan.scenarios.join(','), '--runs', String(plan.runs),
      '--label', `vscode ${new Date(startedAt).toISOString()}`,
    ];
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Strata: benchmark', cancellable: true },
        async (progress, token) => {
          let reported = 0;
          const show = (p = tracker.view()): void => {
            const pct = Math.floor((p.done / p.total) * 100);
            progress.report({
              message: `${p.current ?? 'preparing'} · ${p.done} of ${p.total} done${p.etaS !== null ? ` · ~${formatSeconds(p.etaS)} left` : ''}`,
              increment: pct > reported ? pct - reported : undefined,
            });
            reported = Math.max(reported, pct);
            set({ progress: p });
          };
          show();
          const runOne = (url: string, out: string, withKey: boolean): Promise<number | null> => new Promise((resolve) => {
            const args = argsFor(url, out);
            log.info(`benchmark: ${args.join(' ')}`);
            const child = spawnNodeScript(cli, args, withKey && key ? { [API_KEY_ENV]: key } : {});
            const sub = token.onCancellationRequested(() => child.kill('SIGTERM'));
            child.onOutput((line) => {
              log.info(`[bench] ${line}`);
              const p = tracker.line(line);
              if (p) show(p);
            });
            child.onExit((c) => { sub.dispose(); resolve(token.isCancellationRequested ? null : c); });
          });
          const ours = join(dir, 'bench.json');
          const code = await runOne(client.baseUrl, ours, true);
          if (code === null) return null;
          if (code !== 0 || !existsSync(ours)) throw new Error(`the benchmark exited with code ${code}; see "Strata: Show Log"`);
          let theirs: string | null = null;
          if (plan.baselineUrl) {
            tracker.startBaseline();
            theirs = join(dir, 'baseline.json');
            const c2 = await runOne(plan.baselineUrl, theirs, false);
            if (c2 === null) return null;
            if (c2 !== 0 || !existsSync(theirs)) throw new Error(`the benchmark of ${plan.baselineUrl} exited with code ${c2}; see "Strata: Show Log"`);
          }
          return { ours, theirs };
        },
      );
      if (outcome === null) return set({ running: false, progress: null, error: 'cancelled' });
      const json: unknown = JSON.parse(readFileSync(outcome.ours, 'utf8'));
      const run = benchRun(json, client.baseUrl, Date.now(), server.status.model);
      if (!run.figures.length) throw new Error('the benchmark wrote no figures');
      run.scenarios = plan.scenarios;
      run.runsPerScenario = plan.runs;
      run.durationsMs = tracker.durations();
      if (outcome.theirs && plan.baselineUrl) {
        const other: unknown = JSON.parse(readFileSync(outcome.theirs, 'utf8'));
        const m = (other as { model?: unknown }).model;
        run.baseline = { url: plan.baselineUrl, model: typeof m === 'string' ? m : null, figures: benchFigures(other) };
      }
      await store.add(run);
      set({ running: false, progress: null, error: null });
      void vscode.window.showInformationMessage(`Strata: benchmark done in ${formatSeconds((Date.now() - startedAt) / 1000)} (${run.figures.length} figures). See the Bench tab.`);
    } catch (err) {
      const msg = (err as Error).message;
      set({ running: false, progress: null, error: msg });
      void vscode.window.showErrorMessage(`Strata: ${msg}`, 'Show Log').then((b) => b && log.show());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }));
  return { view, clear: async () => { await store.clear(); onChange(view()); } };
}
