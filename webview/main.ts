// The Strata panel UI (runs in the webview). State lives in state.ts; this file draws it,
// wires the tabs (keyboard: arrows, Home, End) and talks to the extension through protocol.ts.
import { TAB_IDS, type FromWebview, type TabId, type ToWebview } from '../contract/panel.js';
import { initialState, persisted, reduce, type ViewState } from './state.js';
import { button, h } from './dom.js';
import { destroyCharts } from './charts/charts.js';
import { Header } from './header.js';
import { ChatTab } from './tabs/chat.js';
import { renderSessions } from './tabs/sessions.js';
import { renderKv } from './tabs/kvcache.js';
import { renderTrace } from './tabs/trace.js';
import { renderDevices } from './tabs/devices.js';
import { renderBench } from './tabs/bench.js';
import { renderIndex } from './tabs/index.js';

interface VsCodeApi {
  postMessage(msg: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const TAB_LABELS: Record<TabId, string> = { chat: 'Chat', sessions: 'Sessions', kv: 'KV cache', trace: 'Trace', devices: 'Devices', bench: 'Bench', index: 'Index' };

let state: ViewState = initialState(vscode.getState());
const post = (m: FromWebview): void => vscode.postMessage(m);
let idCounter = 0;
const newId = (): string => `${Date.now().toString(36)}-${(idCounter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

const root = document.getElementById('app')!;
const header = new Header((m) => post(m));
const notice = h('div', { class: 'notice', role: 'status', 'aria-live': 'polite' });
const tabButtons = new Map<TabId, HTMLButtonElement>();
const panels = new Map<TabId, HTMLElement>();
const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Strata panel' });
for (const id of TAB_IDS) {
  const b = h('button', { type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `panel-${id}` }, TAB_LABELS[id]);
  b.addEventListener('click', () => selectTab(id));
  b.addEventListener('keydown', (e) => onTabKey(e, id));
  tabButtons.set(id, b);
  tablist.append(b);
  panels.set(id, h('section', { role: 'tabpanel', id: `panel-${id}`, 'aria-labelledby': `tab-${id}`, tabindex: 0, class: 'panel' }));
}

const chat = new ChatTab({ state: () => state, update: (s) => setState(s), post }, newId);
panels.get('chat')!.append(chat.el);
root.replaceChildren(header.el, tablist, notice, ...panels.values());

function onTabKey(e: KeyboardEvent, id: TabId): void {
  const i = TAB_IDS.indexOf(id);
  const to = e.key === 'ArrowRight' ? TAB_IDS[(i + 1) % TAB_IDS.length]
    : e.key === 'ArrowLeft' ? TAB_IDS[(i - 1 + TAB_IDS.length) % TAB_IDS.length]
      : e.key === 'Home' ? TAB_IDS[0] : e.key === 'End' ? TAB_IDS[TAB_IDS.length - 1] : undefined;
  if (!to) return;
  e.preventDefault();
  selectTab(to);
  tabButtons.get(to)!.focus();
}

function selectTab(tab: TabId): void {
  if (tab === state.tab) return;
  setState({ ...state, tab, notice: null });
  post({ type: 'tab', tab });
}

function setState(s: ViewState): void {
  state = s;
  vscode.setState(persisted(state));
  render();
}

/** What each part of the screen depends on: a part is redrawn only when its key changes, so
 * focus and half-done actions (an armed Delete) survive metrics updates. */
function keys(s: ViewState): Record<string, unknown[]> {
  const reqs = s.metrics?.requests;
  return {
    header: [JSON.stringify(s.server), s.metrics?.running, s.metrics?.queued, s.turns.some((t) => t.pending)],
    sessions: [s.sessions, s.sessionsError],
    kv: [s.metrics, s.devices, s.devicesError, s.server?.state],
    trace: [s.traces, s.tracesError, s.selectedTrace, s.completion, `${reqs?.length}:${reqs?.at(-1)?.id}`],
    devices: [s.devices, s.fit, s.devicesError, JSON.stringify(s.metrics?.engines ?? []), JSON.stringify(s.metrics?.models ?? [])],
    bench: [s.bench, s.benchFigure],
    index: [s.index, s.indexSearch],
    notice: [s.notice],
  };
}
let drawn: Record<string, unknown[]> = {};
let drawnTab: TabId | null = null;
const changed = (k: Record<string, unknown[]>, part: string): boolean => {
  const a = k[part]!;
  const b = drawn[part];
  return !b || a.length !== b.length || a.some((v, i) => v !== b[i]);
};

/**
 * Replaces a container's content, keeping keyboard focus on the "same" control. Only while the
 * panel has focus: the last control clicked stays `activeElement` after the user moves on, and
 * focusing it again on a re-render (metrics arrive every second) would pull focus back from the
 * editor or close a quick pick the user is answering.
 */
function replaceKeepingFocus(el: HTMLElement, content: HTMLElement): void {
  const active = document.hasFocus() ? document.activeElement as HTMLElement | null : null;
  const key = active && el.contains(active) ? active.getAttribute('aria-label') ?? active.textContent : null;
  destroyCharts(el);
  el.replaceChildren(content);
  if (key === null) return;
  const again = Array.from(el.querySelectorAll<HTMLElement>('button, [tabindex], input, textarea')).find((c) => (c.getAttribute('aria-label') ?? c.textContent) === key);
  again?.focus();
}

function render(): void {
  const k = keys(state);
  if (changed(k, 'header')) header.render(state);
  for (const [id, b] of tabButtons) {
    const active = id === state.tab;
    b.setAttribute('aria-selected', String(active));
    b.tabIndex = active ? 0 : -1;
    panels.get(id)!.hidden = !active;
  }
  if (changed(k, 'notice')) {
    notice.replaceChildren(...(state.notice ? [h('span', { class: state.notice.level === 'error' ? 'error' : 'info' }, state.notice.text), button('×', () => setState({ ...state, notice: null }), { 'aria-label': 'Dismiss', class: 'icon' })] : []));
  }
  const tab = state.tab;
  const panel = panels.get(tab)!;
  if (tab === 'chat') chat.render(state);
  else if (tab !== drawnTab || changed(k, tab)) {
    switch (tab) {
      case 'sessions': replaceKeepingFocus(panel, renderSessions(state, post)); break;
      case 'kv': replaceKeepingFocus(panel, renderKv(state)); break;
      case 'trace': replaceKeepingFocus(panel, renderTrace(state, (id) => setState({ ...state, selectedTrace: id }), post)); break;
      case 'devices': replaceKeepingFocus(panel, renderDevices(state)); break;
      case 'bench': replaceKeepingFocus(panel, renderBench(state, post, (id) => setState({ ...state, benchFigure: id }))); break;
      // The query is kept without a redraw (typing must not rebuild the tab under the caret).
      case 'index': replaceKeepingFocus(panel, renderIndex(state, post, (q) => { state = { ...state, indexQuery: q }; })); break;
    }
  }
  drawn = k;
  drawnTab = tab;
}

window.addEventListener('message', (e: MessageEvent<ToWebview>) => {
  const msg = e.data;
  if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return;
  const prevTab = state.tab;
  setState(reduce(state, msg));
  if (state.tab !== prevTab) post({ type: 'tab', tab: state.tab });
});

// A theme change recolours the charts: draw the visible tab again.
new MutationObserver(() => { drawn = {}; drawnTab = null; render(); }).observe(document.body, { attributes: true, attributeFilter: ['class'] });

render();
post({ type: 'ready', tab: state.tab });
