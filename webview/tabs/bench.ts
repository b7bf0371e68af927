// Bench tab: run the benchmark (progress: done of total, what runs, time left), the figures of
// the last runs side by side in a table with the change since the run before, a comparison chart
// when the run measured another server too, and one figure's history as a line chart.
import type { ChartConfiguration } from 'chart.js';
import type { FromWebview } from '../../contract/panel.js';
import type { BenchView } from '../../contract/bench.js';
import type { ViewState } from '../state.js';
import { button, empty, fmtDate, h, table } from '../dom.js';
import { benchTable, comparison, figureHistory, type BenchTableRow } from '../layout.js';
import { axisStyle, chartBox, theme } from '../charts/charts.js';
import { labelledIconButton } from '../icons.js';

const fmtValue = (v: number | null): string => (v === null ? '–' : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));

function fmtEta(s: number): string {
  return s < 90 ? `${Math.max(1, Math.round(s))} s` : `${Math.round(s / 60)} min`;
}

function progressView(b: BenchView): HTMLElement | null {
  const p = b.progress;
  if (!b.running || !p) return null;
  const pct = p.total ? Math.round((p.done / p.total) * 100) : 0;
  const fill = h('div', { class: 'meter-fill' });
  fill.style.width = `${pct}%`;
  const text = `${p.current ?? 'preparing'} · ${p.done} of ${p.total} done${p.etaS !== null ? ` · ~${fmtEta(p.etaS)} left` : ''}`;
  return h('div', { class: 'bench-progress', role: 'status' },
    h('div', { class: 'meter wide', role: 'progressbar', 'aria-label': 'Benchmark progress', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct, 'aria-valuetext': text }, fill),
    h('span', { class: 'muted' }, text));
}

function changeCell(r: BenchTableRow): HTMLElement | string {
  if (r.change === null) return '–';
  const pct = `${r.change > 0 ? '+' : ''}${(r.change * 100).toFixed(1)} %`;
  return h('span', { class: r.improved === null ? 'muted' : r.improved ? 'better' : 'worse', title: r.better ? `${r.better} is better` : '' }, pct);
}

function comparisonChart(rows: ReturnType<typeof comparison>, other: string): HTMLElement | null {
  const rated = rows.filter((r) => r.advantage !== null);
  if (!rated.length) return null;
  const t = theme();
  const axis = axisStyle(t);
  const config: ChartConfiguration<'bar'> = {
    type: 'bar',
    data: {
      labels: rated.map((r) => r.name),
      datasets: [{ label: `times better than ${other}`, data: rated.map((r) => r.advantage!), backgroundColor: rated.map((r) => (r.advantage! >= 1 ? t.green : t.red)) }],
    },
    options: {
      indexAxis: 'y',
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => `${(ctx.raw as number).toFixed(2)}× (${fmtValue(rated[ctx.dataIndex]!.ours)} vs ${fmtValue(rated[ctx.dataIndex]!.theirs)} ${rated[ctx.dataIndex]!.unit})` } } },
      scales: {
        x: { ...axis, beginAtZero: true, title: { ...axis.title, display: true, text: `× better than ${other} (1 = the same; right is better)` } },
        y: { ...axis, grid: { display: false } },
      },
    },
  };
  return chartBox(config as ChartConfiguration, 50 + rated.length * 26, `Strata compared with ${other}: ${rated.map((r) => `${r.name} ${r.advantage!.toFixed(2)}×`).join(', ')}`);
}

function historyChart(s: ViewState, id: string, name: string, unit: string): HTMLElement {
  const runs = s.bench?.runs ?? [];
  const { labels, values } = figureHistory(runs, id);
  const t = theme();
  const axis = axisStyle(t);
  const config: ChartConfiguration<'line'> = {
    type: 'line',
    data: { labels, datasets: [{ label: name, data: values, borderColor: t.blue, backgroundColor: t.blue, spanGaps: true, pointRadius: 3 }] },
    options: {
      plugins: { legend: { display: false } },
      scales: { x: { ...axis, ticks: { ...axis.ticks, maxTicksLimit: 8 } }, y: { ...axis, title: { ...axis.title, display: !!unit, text: unit } } },
    },
  };
  return chartBox(config as ChartConfiguration, 200, `${name} over ${runs.length} runs: ${values.map((v) => fmtValue(v)).join(', ')} ${unit}`);
}

export function renderBench(s: ViewState, post: (m: FromWebview) => void, selectFigure: (id: string) => void): HTMLElement {
  const b = s.bench;
  const run = labelledIconButton('dashboard', b?.running ? 'Running…' : 'Run benchmark…', () => post({ type: 'command', command: 'runBench' }), { class: 'primary', disabled: b?.running ?? false });
  const clear = button('Clear history', () => post({ type: 'benchClear' }), { disabled: !b?.runs.length || b.running });
  const { runs, rows } = benchTable(b?.runs ?? []);
  const latest = runs[0];
  const cmp = latest ? comparison(latest) : [];
  const figure = rows.find((r) => r.id === s.benchFigure) ?? rows[0];
  const picker = rows.length > 1 ? h('select', { 'aria-label': 'Figure to chart' }, ...rows.map((r) => h('option', { value: r.id, selected: r.id === figure?.id }, r.name))) : null;
  picker?.addEventListener('change', () => selectFigure((picker as HTMLSelectElement).value));
  return h('div', {},
    h('div', { class: 'row' }, run, clear),
    b ? progressView(b) : null,
    b?.error ? h('p', { class: 'error', role: 'alert' }, `Last run: ${b.error}`) : null,
    rows.length ? h('div', {},
      h('h2', {}, 'Results'),
      h('p', { class: 'muted' }, `Newest first. ${latest ? `Last run ${fmtDate(latest.time)} against ${latest.url}${latest.model ? ` (${latest.model})` : ''}${latest.scenarios ? `: ${latest.scenarios.join(', ')}, ${latest.runsPerScenario ?? 1} run(s) each, medians` : ''}.` : ''}`),
      h('div', { class: 'table-scroll' }, table(
        ['Figure', 'Unit', ...runs.map((r, i) => (i === 0 ? 'latest' : new Date(r.time).toISOString().slice(5, 16).replace('T', ' '))), 'change'],
        rows.map((r) => [r.name, r.unit, ...r.values.map(fmtValue), changeCell(r)]),
        { class: 'grid numeric', 'aria-label': 'Benchmark results' })),
      cmp.length ? h('div', {},
        h('h2', {}, `Compared with ${latest!.baseline!.url}`),
        table(['Figure', 'Unit', 'Strata', latest!.baseline!.url, '× better'], cmp.map((r) => [r.name, r.unit, fmtValue(r.ours), fmtValue(r.theirs),
          r.advantage === null ? '–' : h('span', { class: r.advantage >= 1 ? 'better' : 'worse' }, `${r.advantage.toFixed(2)}×`)]), { class: 'grid numeric', 'aria-label': 'Comparison' }),
        comparisonChart(cmp, latest!.baseline!.url)) : null,
      figure ? h('div', {}, h('div', { class: 'row' }, h('h2', {}, 'History'), picker), historyChart(s, figure.id, figure.name, figure.unit)) : null)
      : empty('No benchmark runs yet. A run measures this server with `strata bench` (choose a quick run or every scenario, or compare with another server) and keeps its figures here.'));
}
