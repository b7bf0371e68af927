// Sessions tab: saved conversations with tokens, size, model, date; restore, delete, show path.
import type { FromWebview } from '../../contract/panel.js';
import type { ViewState } from '../state.js';
import { button, empty, fmtBytes, fmtDate, h, table } from '../dom.js';

export function renderSessions(s: ViewState, post: (m: FromWebview) => void): HTMLElement {
  const refresh = button('Refresh', () => post({ type: 'refresh', tab: 'sessions' }));
  const head = h('div', { class: 'row' }, h('h2', {}, 'Saved sessions'), refresh);
  if (s.sessionsError) return h('div', {}, head, h('p', { class: 'error' }, s.sessionsError));
  if (!s.sessions.length) return h('div', {}, head, empty('No sessions yet. Name a conversation in the Chat tab and save it, or use @strata /save NAME.'));
  const rows = s.sessions.map((x) => {
    const del = button('Delete', () => {
      // Two steps, so a stray click or key press does not delete.
      if (del.dataset.armed) post({ type: 'sessionDelete', name: x.name });
      else {
        del.dataset.armed = '1';
        del.textContent = 'Confirm delete';
        del.classList.add('danger');
      }
    }, { 'aria-label': `Delete session ${x.name}` });
    return [
      x.name,
      x.tokens === null ? '–' : String(x.tokens),
      fmtBytes(x.bytes),
      x.model ?? '–',
      fmtDate(x.savedAt),
      h('span', { class: 'actions' },
        button('Restore', () => post({ type: 'sessionRestore', name: x.name }), { class: 'primary', 'aria-label': `Restore session ${x.name}` }),
        button('Path', () => post({ type: 'sessionReveal', name: x.name }), { 'aria-label': `Show where session ${x.name} is stored` }),
        del),
    ];
  });
  return h('div', {}, head, table(['Name', 'Tokens', 'Size', 'Model', 'Saved', ''], rows, { class: 'grid', 'aria-label': 'Saved sessions' }));
}
