// KV cache tab: slots (state, held tokens, owner), parked conversations, budget, hits, misses,
// evictions, and memory per device.
import type { ViewState } from '../state.js';
import { empty, fmtBytes, fmtNum, h, meter, table } from '../dom.js';
import { memoryCell } from './memory.js';

function stat(label: string, value: string): HTMLElement {
  return h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, value), h('div', { class: 'stat-label' }, label));
}

export function renderKv(s: ViewState): HTMLElement {
  const m = s.metrics;
  if (!m) return empty(s.server?.state === 'ready' ? 'Waiting for the server\'s metrics…' : 'The Strata server is not running: start it to see its KV cache.');
  const c = m.cache;
  const lookups = c.hits + c.misses;
  const maxHeld = Math.max(1, ...m.slots.map((x) => x.heldTokens));
  const slots = m.slots.map((x) => [
    `#${x.slot}${x.replica !== null ? ` (replica ${x.replica})` : ''}`,
    h('span', { class: `badge state-${x.state}` }, x.state),
    h('span', { class: 'cell-meter' }, meter(x.heldTokens, maxHeld, `${x.heldTokens} tokens held`), ` ${x.heldTokens}`),
    x.requestId ?? '–',
    fmtNum(x.tokS),
  ]);
  const devices = s.devices.filter((d) => d.memoryTotal);
  return h('div', {},
    h('div', { class: 'stats' },
      stat('state', m.state),
      stat('queued / admitting / running', `${m.queued} / ${m.admitting} / ${m.running}`),
      stat('parked conversations', String(c.parked)),
      stat('park hit rate', lookups ? `${Math.round((c.hits / lookups) * 100)} %` : '–'),
      stat('hits / misses', `${c.hits} / ${c.misses}`),
      stat('evictions', String(c.evictions)),
      m.staleFrames ? stat('stale frames dropped', String(m.staleFrames)) : null),
    h('h2', {}, 'Park budget'),
    h('div', { class: 'row' }, meter(c.bytes, c.budget, `${fmtBytes(c.bytes)} of ${fmtBytes(c.budget)} used`), h('span', {}, `${fmtBytes(c.bytes)} of ${fmtBytes(c.budget)}`)),
    h('h2', {}, 'Slots'),
    slots.length ? table(['Slot', 'State', 'Held tokens', 'Request', 'tok/s'], slots, { class: 'grid', 'aria-label': 'Slots' }) : empty('No slots reported.'),
    h('h2', {}, 'Memory per device'),
    s.devicesError ? h('p', { class: 'error' }, s.devicesError)
      : devices.length ? table(['Device', 'Replica', 'Memory'], devices.map((d) => [d.name, d.replica === null ? '–' : String(d.replica), memoryCell(d)]),
        { class: 'grid', 'aria-label': 'Device memory' }) : empty('No device memory reported.'));
}
