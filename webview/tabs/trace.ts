// Trace tab: recent requests, the selected request's waterfall, the per-step batch timeline,
// and the inline-completion counters.
import type { RequestTraceView } from '../../extension/api/types.js';
import type { FromWebview } from '../protocol.js';
import type { ViewState } from '../state.js';
import { button, empty, fmtNum, h, svg, table, title } from '../dom.js';
import { stepBars, waterfall } from '../layout.js';

const W = 600;

function waterfallSvg(r: RequestTraceView): SVGElement {
  const { segments, total } = waterfall(r);
  const rowH = 18;
  const labelW = 150;
  const x = (t: number): number => labelW + (t / total) * (W - labelW - 10);
  const rows = segments.map((seg, i) => {
    const y = i * rowH + 2;
    const width = Math.max(2, x(seg.to) - x(seg.from));
    return svg('g', {},
      svg('text', { x: 0, y: y + 12, class: 'svg-label' }, seg.label),
      seg.from === seg.to
        ? svg('rect', { x: x(seg.from) - 1, y, width: 3, height: rowH - 4, class: `seg seg-${seg.kind}` }, title(`${seg.label} at ${seg.from.toFixed(1)} ms`))
        : svg('rect', { x: x(seg.from), y, width, height: rowH - 4, class: `seg seg-${seg.kind}` }, title(`${seg.label}: ${seg.from.toFixed(1)}–${seg.to.toFixed(1)} ms (${(seg.to - seg.from).toFixed(1)} ms)`)));
  });
  const hgt = segments.length * rowH + 20;
  return svg('svg', { viewBox: `0 0 ${W} ${hgt}`, width: W, role: 'img', 'aria-label': `Waterfall of request ${r.id}, ${total.toFixed(0)} ms` },
    ...rows,
    svg('text', { x: labelW, y: hgt - 4, class: 'svg-axis' }, '0 ms'),
    svg('text', { x: W - 10, y: hgt - 4, class: 'svg-axis', 'text-anchor': 'end' }, `${total.toFixed(1)} ms`));
}

function stepsSvg(s: ViewState): SVGElement | HTMLElement {
  const { bars, maxMs, maxTokens } = stepBars(s.traces?.steps ?? []);
  if (!bars.length) return empty('No engine steps recorded yet.');
  const H = 120;
  const TH = 40;
  const bw = W / Math.max(bars.length, 30);
  const children: SVGElement[] = [];
  bars.forEach((b, i) => {
    const x0 = i * bw;
    let y = H;
    for (const p of b.parts) {
      const ph = (p.ms / maxMs) * (H - 4);
      y -= ph;
      if (ph > 0) children.push(svg('rect', { x: x0, y, width: Math.max(1, bw - 1), height: ph, class: `seg step-${p.kind}` }));
    }
    // Batch composition under the time bars: decode tokens vs prompt tokens.
    const dh = (b.decodeTokens / maxTokens) * TH;
    const ph = (b.promptTokens / maxTokens) * TH;
    children.push(svg('rect', { x: x0, y: H + 6, width: Math.max(1, bw - 1), height: dh, class: 'seg seg-decode' }));
    children.push(svg('rect', { x: x0, y: H + 6 + dh, width: Math.max(1, bw - 1), height: ph, class: 'seg seg-prompt' }));
    children.push(svg('rect', { x: x0, y: 0, width: bw, height: H + TH + 6, class: 'hit' },
      title(`step ${b.step}: ${b.totalMs.toFixed(2)} ms (${b.parts.map((p) => `${p.kind} ${p.ms.toFixed(2)}`).join(', ')}); ${b.sequences} sequences, ${b.decodeTokens} decode + ${b.promptTokens} prompt tokens`)));
  });
  return svg('svg', { viewBox: `0 0 ${W} ${H + TH + 10}`, width: W, role: 'img', 'aria-label': `Last ${bars.length} engine steps, longest ${maxMs.toFixed(1)} ms` }, ...children);
}

function legend(items: Array<[string, string]>): HTMLElement {
  return h('div', { class: 'legend' }, ...items.map(([cls, label]) => h('span', {}, h('i', { class: `swatch ${cls}` }), label)));
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
    ...reqs.slice(-16).map((r) => {
      const b = button(`#${r.id}`, () => select(r.id), { role: 'option', 'aria-selected': r.id === selected?.id ? 'true' : 'false', class: r.id === selected?.id ? 'chip selected' : 'chip' });
      return b;
    })) : null;
  const history = s.metrics?.requests.slice(-10).reverse() ?? [];
  return h('div', {},
    h('div', { class: 'row' }, h('h2', {}, 'Request waterfall'), button('Refresh', () => post({ type: 'refresh', tab: 'trace' }))),
    s.tracesError ? h('p', { class: 'error' }, s.tracesError) : null,
    picker,
    selected ? waterfallSvg(selected) : empty('No traced requests yet: chat or complete some code, then look again.'),
    legend([['seg-queue', 'queued'], ['seg-admit', 'reuse / restore'], ['seg-prompt', 'prompt'], ['seg-first', 'first token'], ['seg-decode', 'decode']]),
    h('h2', {}, 'Engine steps'),
    stepsSvg(s),
    legend([['step-build', 'batch build'], ['step-decode', 'decode'], ['step-sample', 'sample'], ['step-detok', 'detokenize'], ['seg-decode', 'decode tokens'], ['seg-prompt', 'prompt tokens']]),
    h('h2', {}, 'Recent requests'),
    history.length ? table(['Request', 'Prompt', 'Reused', 'Output', 'Prompt ms', 'Decode tok/s', 'Finish'], history.map((r) => [
      r.id ?? '–', fmtNum(r.promptTokens), fmtNum(r.reusedTokens), fmtNum(r.outputTokens), fmtNum(r.promptMs), fmtNum(r.decodeTokS), r.finish ?? '–',
    ]), { class: 'grid', 'aria-label': 'Recent requests' }) : empty('No requests yet.'),
    h('h2', {}, 'Inline completions'),
    completions ?? empty('No completions yet.'));
}
