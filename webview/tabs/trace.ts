// Trace tab: recent requests, the selected request's waterfall (a time axis with values, every
// phase labelled in full), the per-step batch timeline (ms and tokens per step, with axes), the
// speculative drafts' acceptance by position, and the inline-completion counters. Charts fill the
// panel's width.
import type { ChartConfiguration } from 'chart.js';
import type { RequestTraceView } from '../../contract/traces.js';
import type { FromWebview } from '../../contract/panel.js';
import type { ViewState } from '../state.js';
import { button, empty, fmtNum, h, table } from '../dom.js';
import { stepBars, waterfall, type Segment } from '../layout.js';
import { axisStyle, chartBox, theme, type Theme } from '../charts/charts.js';

const KIND_COLOR: Record<Segment['kind'], keyof Theme> = { queue: 'yellow', admit: 'purple', prompt: 'orange', first: 'red', decode: 'green' };

function waterfallChart(r: RequestTraceView): HTMLElement {
  const { segments, total } = waterfall(r);
  const t = theme();
  const axis = axisStyle(t);
  // Points in time (first token, a restore) get a sliver of width so they show as marks.
  const mark = total / 250;
  const config: ChartConfiguration<'bar', Array<[number, number]>, string> = {
    type: 'bar',
    data: {
      labels: segments.map((s) => s.label),
      datasets: [{
        label: `request ${r.id}`,
        data: segments.map((s) => [s.from, s.to > s.from ? s.to : s.from + mark]),
        backgroundColor: segments.map((s) => t[KIND_COLOR[s.kind]]),
        borderSkipped: false,
        barPercentage: 0.8,
        categoryPercentage: 0.9,
      }],
    },
    options: {
      indexAxis: 'y',
      plugins: {
        legend: { display: false },
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const s = segments[ctx.dataIndex]!;
              return s.from === s.to ? `at ${s.from.toFixed(1)} ms` : `${s.from.toFixed(1)}–${s.to.toFixed(1)} ms (${(s.to - s.from).toFixed(1)} ms)`;
            },
          },
        },
      },
      scales: {
        x: { ...axis, min: 0, max: Math.ceil(total * 1.02), title: { ...axis.title, display: true, text: 'ms after the server accepted the request' } },
        y: { ...axis, grid: { display: false } },
      },
    },
  };
  const summary = segments.map((s) => (s.from === s.to ? `${s.label} at ${s.from.toFixed(0)} ms` : `${s.label} ${s.from.toFixed(0)}–${s.to.toFixed(0)} ms`)).join(', ');
  return chartBox(config as ChartConfiguration, 40 + segments.length * 24, `Waterfall of request ${r.id}, ${total.toFixed(0)} ms: ${summary}`);
}

function stepCharts(s: ViewState): HTMLElement {
  const { bars, maxMs } = stepBars(s.traces?.steps ?? []);
  if (!bars.length) return empty('No engine steps recorded yet.');
  const t = theme();
  const axis = axisStyle(t);
  const labels = bars.map((b) => String(b.step));
  const phases: Array<[string, 'build' | 'decode' | 'sample' | 'detok', keyof Theme]> = [
    ['batch build', 'build', 'yellow'], ['decode', 'decode', 'blue'], ['sample', 'sample', 'purple'], ['detokenize', 'detok', 'red'],
  ];
  const scales = (yTitle: string) => ({
    x: { ...axis, stacked: true, title: { ...axis.title, display: true, text: 'engine step' }, ticks: { ...axis.ticks, maxTicksLimit: 12 } },
    y: { ...axis, stacked: true, beginAtZero: true, title: { ...axis.title, display: true, text: yTitle } },
  });
  const time: ChartConfiguration<'bar'> = {
    type: 'bar',
    data: { labels, datasets: phases.map(([label, kind, color]) => ({ label, data: bars.map((b) => b.parts.find((p) => p.kind === kind)!.ms), backgroundColor: t[color] })) },
    options: { plugins: { legend: { position: 'bottom', labels: { color: t.fg, boxWidth: 10 } } }, scales: scales('ms per step') },
  };
  const tokens: ChartConfiguration<'bar'> = {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { label: 'decode tokens', data: bars.map((b) => b.decodeTokens), backgroundColor: t.green },
        { label: 'prompt tokens', data: bars.map((b) => b.promptTokens), backgroundColor: t.orange },
      ],
    },
    options: { plugins: { legend: { position: 'bottom', labels: { color: t.fg, boxWidth: 10 } } }, scales: scales('tokens per step') },
  };
  return h('div', {},
    chartBox(time as ChartConfiguration, 200, `Time of the last ${bars.length} engine steps, longest ${maxMs.toFixed(1)} ms`),
    chartBox(tokens as ChartConfiguration, 160, `Tokens in the last ${bars.length} engine steps`));
}

/** What the server's drafts earned, position by position (a draft's first token is position 1). */
function draftPositions(s: ViewState): HTMLElement {
  const t = s.metrics?.totals;
  const positions = s.metrics?.draftPositions ?? [];
  if (!t || positions.length === 0) {
    return empty('No drafts verified yet. The server drafts with the model\'s MTP head, a draft model, n-grams of the prompt (edits, completions) or a request\'s prediction.');
  }
  const pct = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)} %`);
  return h('div', {},
    h('p', {}, `${fmtNum(t.drafted_tokens ?? 0)} draft tokens verified, ${pct(t.draft_acceptance ?? null)} accepted.`),
    table(['Position', 'Drafts', 'Accepted', 'Acceptance'], positions.map((p) => [String(p.position), fmtNum(p.drafted), fmtNum(p.accepted), pct(p.acceptance)]),
      { class: 'grid', 'aria-label': 'Draft acceptance by position' }));
}

export function renderTrace(s: ViewState, select: (id: string) => void, post: (m: FromWebview) => void): HTMLElement {
  const c = s.completion;
  const completions = c ? h('div', { class: 'stats' },
    ...[
      ['completion requests', String(c.requests)], ['served from cache', String(c.cacheHits)], ['shown', String(c.shown)],
      ['accepted', `${c.accepted}${c.shown ? ` (${Math.round((c.accepted / c.shown) * 100)} %)` : ''}`],
      ['latency p50 / p90', `${fmtNum(c.latencyP50Ms, 0)} / ${fmtNum(c.latencyP90Ms, 0)} ms`], ['cancelled / errors', `${c.cancelled} / ${c.errors}`],
    ].map(([label, value]) => h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, value!), h('div', { class: 'stat-label' }, label!)))) : null;

  const reqs = s.traces?.requests ?? [];
  const selected = reqs.find((r) => r.id === s.selectedTrace) ?? reqs.at(-1);
  const picker = reqs.length ? h('div', { class: 'chips', role: 'listbox', 'aria-label': 'Traced requests' },
    ...reqs.slice(-16).map((r) => button(`#${r.id}`, () => select(r.id), { role: 'option', 'aria-selected': r.id === selected?.id ? 'true' : 'false', class: r.id === selected?.id ? 'chip selected' : 'chip' }))) : null;
  const history = s.metrics?.requests.slice(-10).reverse() ?? [];
  return h('div', {},
    h('div', { class: 'row' }, h('h2', {}, 'Request waterfall'), button('Refresh', () => post({ type: 'refresh', tab: 'trace' }))),
    s.tracesError ? h('p', { class: 'error' }, s.tracesError) : null,
    picker,
    selected ? waterfallChart(selected) : empty('No traced requests yet: chat or complete some code, then look again.'),
    h('h2', {}, 'Engine steps'),
    stepCharts(s),
    h('h2', {}, 'Recent requests'),
    history.length ? table(['Request', 'Prompt', 'Reused', 'Output', 'Prompt ms', 'Decode tok/s', 'Finish'], history.map((r) => [
      r.id ?? '–', fmtNum(r.promptTokens), fmtNum(r.reusedTokens), fmtNum(r.outputTokens), fmtNum(r.promptMs), fmtNum(r.decodeTokS), r.finish ?? '–',
    ]), { class: 'grid', 'aria-label': 'Recent requests' }) : empty('No requests yet.'),
    h('h2', {}, 'Speculative drafts'),
    draftPositions(s),
    h('h2', {}, 'Inline completions'),
    completions ?? empty('No completions yet.'));
}
