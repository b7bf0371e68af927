// Index tab: the codebase index (files, chunks, vectors, store size, model, last update, the pass
// running now with pause / resume / cancel / rebuild) and a search box whose hits show every
// stage's score (full text, vector, fused, rerank), so a user can see why a chunk was chosen.
import type { FromWebview, IndexHitView, IndexView } from '../../contract/panel.js';
import type { ViewState } from '../state.js';
import { button, empty, fmtBytes, h, table } from '../dom.js';

function progressLine(v: IndexView): string {
  if (v.phase === 'idle') return v.message ? `Idle · ${v.message}` : 'Up to date';
  const eta = v.etaSeconds !== null && v.phase === 'embedding' ? ` · about ${v.etaSeconds < 90 ? `${v.etaSeconds} s` : `${Math.round(v.etaSeconds / 60)} min`} left` : '';
  const what = v.phase === 'embedding' ? `embedding ${v.chunksDone.toLocaleString()} of ${v.chunksTotal.toLocaleString()} chunks`
    : v.phase === 'chunking' ? `reading ${v.filesDone.toLocaleString()} of ${v.filesTotal.toLocaleString()} files` : 'scanning the workspace';
  return `${v.paused ? 'Paused: ' : ''}${what}${eta}`;
}

const score = (x: { score: number; rank: number } | null, digits: number): string => (x ? `${x.score.toFixed(digits)} (#${x.rank})` : '–');

function hitRow(hit: IndexHitView): HTMLElement {
  const where = `${hit.path}:${hit.startLine}-${hit.endLine}`;
  const preview = h('pre', { class: 'index-hit-text' }, hit.text.split('\n').slice(0, 6).join('\n'));
  return h('div', { class: 'index-hit', role: 'listitem', 'aria-label': where },
    h('div', { class: 'row' }, h('strong', {}, where)),
    h('div', { class: 'muted index-scores' },
      `full text ${score(hit.fullText, 2)} · vector ${score(hit.vector, 3)} · fused ${hit.fused.toFixed(4)} · rerank ${hit.rerank === null ? '–' : hit.rerank.toFixed(3)}`),
    preview);
}

export function renderIndex(s: ViewState, post: (m: FromWebview) => void, setQuery: (q: string) => void): HTMLElement {
  const v = s.index;
  if (!v) return h('div', {}, empty('The codebase index is starting…'));
  if (!v.enabled) return h('div', {}, empty('The codebase index is off (strata.codebase.enabled).'));
  const when = v.lastUpdated ? new Date(v.lastUpdated).toLocaleString() : 'never';
  const facts = table(['Files', 'Chunks', 'Vectors', 'Store', 'Embedding model', 'Reranker', 'Last update'], [[
    v.files.toLocaleString(), v.chunks.toLocaleString(), v.vectors.toLocaleString(), fmtBytes(v.bytes), v.model ?? 'none (full text only)', v.reranker ?? 'none', when,
  ]], { class: 'grid', 'aria-label': 'Index' });
  const busy = v.phase !== 'idle';
  const actions = h('div', { class: 'row' },
    busy && !v.paused ? button('Pause', () => post({ type: 'indexAction', action: 'pause' })) : null,
    busy && v.paused ? button('Resume', () => post({ type: 'indexAction', action: 'resume' })) : null,
    busy ? button('Cancel', () => post({ type: 'indexAction', action: 'cancel' })) : null,
    button('Rebuild', () => post({ type: 'indexAction', action: 'rebuild' }), { title: 'Scan the workspace again and embed what has no vector' }));
  const input = h('input', { type: 'search', class: 'index-query', placeholder: 'Search the codebase (full text + vectors, reranked)', 'aria-label': 'Search the codebase', value: s.indexQuery });
  const run = (): void => { if (input.value.trim()) post({ type: 'indexSearch', query: input.value }); };
  input.addEventListener('input', () => setQuery(input.value));
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') run(); });
  const r = s.indexSearch;
  const results = !r ? null
    : r.error ? h('p', { class: 'error' }, r.error)
      : h('div', {},
        h('p', { class: 'muted', role: 'status' }, `${r.hits.length} hits for “${r.query}” in ${Math.round(r.ms)} ms (${r.stages.join(' + ')})`),
        r.hits.length ? h('div', { role: 'list', 'aria-label': 'Search results', class: 'index-hits' }, ...r.hits.map(hitRow)) : empty('Nothing matched.'));
  return h('div', { class: 'index-tab' },
    h('h2', {}, 'Codebase index'),
    h('p', { role: 'status', 'aria-label': 'Index progress', class: v.message && !busy ? 'warn' : '' }, progressLine(v)),
    facts,
    actions,
    h('h2', {}, 'Search'),
    h('div', { class: 'row' }, input, button('Search', run, { class: 'primary' })),
    results);
}
