// Devices tab: the served models (state, memory estimate, use), memory per device and replica,
// layers placed, engine epochs and restarts.
import type { ViewState } from '../state.js';
import { empty, fmtBytes, fmtDate, h, table } from '../dom.js';
import { memoryCell } from './memory.js';

export function renderDevices(s: ViewState): HTMLElement {
  const engines = s.metrics?.engines ?? [];
  const devRows = s.devices.map((d) => [
    d.name, d.description || '–', d.type || '–', d.replica === null ? '–' : String(d.replica),
    d.layers === null ? '–' : String(d.layers), memoryCell(d),
  ]);
  const engRows = engines.map((e) => [
    String(e.replica), h('span', { class: `badge ${e.alive ? 'state-ok' : 'state-failed'}` }, e.alive ? 'alive' : 'down'),
    String(e.epoch), e.pid === null ? '–' : String(e.pid), String(e.restarts), e.devices.join(', ') || '–',
  ]);
  const models = s.metrics?.models ?? [];
  const modelRows = models.map((m) => [
    m.name, m.role ?? '–', h('span', { class: `badge state-${m.state}`, title: m.error ?? '' }, m.state),
    fmtBytes(m.memoryBytes), String(m.inFlight), String(m.requests), fmtDate(m.lastUsed),
  ]);
  return h('div', {},
    models.length > 1 ? h('h2', {}, 'Models') : null,
    models.length > 1 ? table(['Model', 'Role', 'State', 'Memory (est.)', 'In flight', 'Requests', 'Last used'], modelRows, { class: 'grid', 'aria-label': 'Models' }) : null,
    h('h2', {}, 'Devices'),
    s.devicesError ? h('p', { class: 'error' }, s.devicesError)
      : devRows.length ? table(['Device', 'Description', 'Type', 'Replica', 'Layers', 'Memory'], devRows, { class: 'grid', 'aria-label': 'Devices' }) : empty('No devices reported yet.'),
    h('h2', {}, 'Engines'),
    engRows.length ? table(['Replica', 'State', 'Epoch', 'PID', 'Restarts', 'Devices'], engRows, { class: 'grid', 'aria-label': 'Engines' }) : empty('No engine information yet.'));
}
