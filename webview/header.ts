// The panel header: server state and model on one line, server actions behind one icon (a menu),
// and a confirmation before stopping or restarting while requests run. The chat's own Stop (the
// answer) is the only Stop button in sight while an answer streams.
import type { FromWebview, PanelCommand } from '../contract/panel.js';
import { activeRequests, type ViewState } from './state.js';
import { h } from './dom.js';
import { icon, iconButton } from './icons.js';
import { modelSummary } from './layout.js';

interface HeaderUi { menuOpen: boolean; confirm: PanelCommand | null }

export class Header {
  readonly el = h('header', { class: 'server' });
  private ui: HeaderUi = { menuOpen: false, confirm: null };
  private last: ViewState | null = null;

  constructor(private readonly post: (m: FromWebview) => void) {
    document.addEventListener('click', (e) => {
      // composedPath: the clicked button may already be replaced by the re-render.
      if (this.ui.menuOpen && !e.composedPath().includes(this.el)) this.set({ menuOpen: false });
    });
    this.el.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && (this.ui.menuOpen || this.ui.confirm)) this.set({ menuOpen: false, confirm: null });
    });
  }

  render(s: ViewState): void {
    this.last = s;
    const sv = s.server;
    const st = sv?.state ?? 'stopped';
    const label = st === 'ready' ? (sv?.busy ? 'busy' : 'ready') : st === 'starting' ? 'loading' : st;
    const running = st === 'ready' || st === 'starting';
    const menuButton = iconButton('server-process', 'Server actions', () => this.set({ menuOpen: !this.ui.menuOpen, confirm: null }), { 'aria-haspopup': 'menu', 'aria-expanded': String(this.ui.menuOpen) });
    const item = (ic: string, text: string, command: PanelCommand): HTMLElement => {
      const b = h('button', { type: 'button', role: 'menuitem' }, icon(ic), h('span', {}, text));
      b.addEventListener('click', () => this.run(command));
      return b;
    };
    const menu = this.ui.menuOpen ? h('div', { class: 'menu', role: 'menu', 'aria-label': 'Server actions' },
      running ? item('debug-stop', 'Stop Server', 'stop') : item('play', 'Start Server', 'start'),
      running ? item('debug-restart', 'Restart Server', 'restart') : null,
      item('library', 'Select Model…', 'selectModel'),
      item('dashboard', 'Run Benchmark…', 'runBench'),
      item('output', 'Show Log', 'showLog')) : null;
    const confirm = this.ui.confirm ? this.confirmEl(this.ui.confirm, activeRequests(s)) : null;
    const parts = [
      h('div', { class: 'server-row' },
        h('span', { class: `badge state-${label}` }, label),
        h('span', { class: 'model', title: sv?.url ? `${sv.model ?? ''} at ${sv.url}` : '' }, sv?.model ?? (st === 'ready' ? 'model' : 'no server')),
        h('span', { class: 'spacer' }),
        h('span', { class: 'menu-anchor' }, menuButton, menu)),
      this.modelsEl(s),
      sv?.message ? h('div', { class: st === 'failed' ? 'error server-message' : 'muted server-message' }, sv.message) : null,
      confirm,
    ];
    this.el.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
  }

  /** Several models served: each one's state, on one line. */
  private modelsEl(s: ViewState): HTMLElement | null {
    const models = modelSummary(s.metrics?.models ?? []);
    if (!models) return null;
    return h('div', { class: 'server-models muted', 'aria-label': 'Models' },
      ...models.map((m) => h('span', { class: `model-state state-${m.state}`, title: m.title }, `${m.name} ${m.state}`)));
  }

  private confirmEl(command: PanelCommand, requests: number): HTMLElement {
    const verb = command === 'stop' ? 'Stop' : 'Restart';
    const yes = h('button', { type: 'button', class: 'primary danger' }, `${verb} Server`);
    yes.addEventListener('click', () => { this.set({ confirm: null }); this.post({ type: 'command', command }); });
    const no = h('button', { type: 'button' }, 'Cancel');
    no.addEventListener('click', () => this.set({ confirm: null }));
    queueMicrotask(() => no.focus());
    return h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': `${verb} the server?` },
      h('span', {}, `${requests} request${requests === 1 ? ' is' : 's are'} running. ${verb} the server anyway? ${requests === 1 ? 'It' : 'They'} will end with an error.`),
      yes, no);
  }

  private run(command: PanelCommand): void {
    const risky = command === 'stop' || command === 'restart';
    if (risky && this.last && activeRequests(this.last) > 0) {
      this.set({ menuOpen: false, confirm: command });
      return;
    }
    this.set({ menuOpen: false });
    this.post({ type: 'command', command });
  }

  private set(change: Partial<HeaderUi>): void {
    this.ui = { ...this.ui, ...change };
    if (this.last) this.render(this.last);
  }
}
