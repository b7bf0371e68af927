// Tiny DOM helpers: elements built with textContent only (never innerHTML), so nothing the
// server or the model sends can inject markup.

export { fmtBytes } from '../contract/units.js';

type Attrs = Record<string, string | number | boolean | undefined | null>;
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
}

export function button(label: string, onClick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', onClick);
  return b;
}

/** A titled SVG tooltip (screen readers read <title> too). */
export function title(text: string): SVGElement {
  return svg('title', {}, text);
}


export function fmtNum(v: number | null, digits = 1): string {
  if (v === null) return '–';
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

export function fmtDate(ms: number | null): string {
  return ms === null ? '–' : new Date(ms).toLocaleString();
}

/** A horizontal meter: filled share of a total (role=meter for assistive tech). */
export function meter(value: number, max: number, label: string): HTMLElement {
  const pct = max > 0 ? Math.min(100, Math.max(0, (value / max) * 100)) : 0;
  const fill = h('div', { class: 'meter-fill' });
  fill.style.width = `${pct}%`;
  return h('div', { class: 'meter', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': max, 'aria-valuenow': value, 'aria-label': label, title: label }, fill);
}

export function table(head: string[], rows: Child[][], attrs: Attrs = {}): HTMLTableElement {
  return h('table', attrs,
    h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))));
}

export function empty(text: string): HTMLElement {
  return h('p', { class: 'muted' }, text);
}
