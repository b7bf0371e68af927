// Devices tab: memory per device and replica, layers placed, engine epochs and restarts.
import type { ViewState } from '../state.js';
import { empty, h, table } from '../dom.js';
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
  return h('div', {},
    h('h2', {}, 'Devices'),
    s.devicesError ? h('p', { class: 'error' }, s.devicesError)
      : devRows.length ? table(['Device', 'Description', 'Type', 'Replica', 'Layers', 'Memory'], devRows, { class: 'grid', 'aria-label': 'Devices' }) : empty('No devices reported yet.'),
    h('h2', {}, 'Engines'),
    engRows.length ? table(['Replica', 'State', 'Epoch', 'PID', 'Restarts', 'Devices'], engRows, { class: 'grid', 'aria-label': 'Engines' }) : empty('No engine information yet.'));
}
