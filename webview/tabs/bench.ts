// Bench tab: run the benchmark, see each figure as bars, one per run, earlier runs kept.
import type { FromWebview } from '../protocol.js';
import type { ViewState } from '../state.js';
import { button, empty, h, svg, title } from '../dom.js';
import { benchCharts } from '../layout.js';

export function renderBench(s: ViewState, post: (m: FromWebview) => void): HTMLElement {
  const b = s.bench;
  const run = button(b?.running ? 'Running…' : 'Run benchmark', () => post({ type: 'command', command: 'runBench' }), { class: 'primary', disabled: b?.running ?? false });
  const clear = button('Clear history', () => post({ type: 'benchClear' }), { disabled: !b?.runs.length || b.running });
  const charts = benchCharts(b?.runs ?? []);
  return h('div', {},
    h('div', { class: 'row' }, run, clear),
    b?.running ? h('p', { class: 'muted', role: 'status' }, b.progress ?? 'running…') : null,
    b?.error ? h('p', { class: 'error', role: 'alert' }, `Last run: ${b.error}`) : null,
    charts.length ? h('div', { class: 'charts' }, ...charts.map((c) => {
      const rowH = 18;
      const labelW = 110;
      const W = 420;
      const bars = c.bars.map((bar, i) => {
        const w = Math.max(1, (Math.abs(bar.value) / c.max) * (W - labelW - 90));
        const y = i * rowH;
        const text = `${bar.value.toFixed(bar.value < 10 ? 2 : 1)} ${c.unit}`.trim();
        return svg('g', {},
          svg('text', { x: 0, y: y + 12, class: 'svg-label' }, bar.label),
          svg('rect', { x: labelW, y: y + 2, width: w, height: rowH - 5, class: i === c.bars.length - 1 ? 'seg seg-latest' : 'seg seg-prompt' }, title(`${c.name}: ${text} (${bar.label})`)),
          svg('text', { x: labelW + w + 4, y: y + 12, class: 'svg-label' }, text));
      });
      return h('figure', { class: 'chart' },
        h('figcaption', {}, c.name, c.better ? h('span', { class: 'muted' }, ` (${c.better} is better)`) : null),
        svg('svg', { viewBox: `0 0 ${W} ${c.bars.length * rowH + 4}`, width: W, role: 'img', 'aria-label': `${c.name}: ${c.bars.map((x) => `${x.label} ${x.value}`).join(', ')}` }, ...bars));
    })) : empty('No benchmark runs yet. A run measures this server with `strata bench` and keeps its figures here for comparison.'));
}
