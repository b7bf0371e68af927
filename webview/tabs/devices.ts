// Devices tab: memory per device and replica, layers placed, engine epochs and restarts.
import type { ViewState } from '../state.js';
import { empty, fmtBytes, h, meter, table } from '../dom.js';

export function renderDevices(s: ViewState): HTMLElement {
  const engines = s.metrics?.engines ?? [];
  const devRows = s.devices.map((d) => {
    const used = d.memoryTotal !== null && d.memoryFree !== null ? d.memoryTotal - d.memoryFree : null;
    return [
      d.name, d.description || '–', d.type || '–', d.replica === null ? '–' : String(d.replica),
      d.layers === null ? '–' : String(d.layers),
      used === null ? '–' : h('span', { class: 'cell-meter' }, meter(used, d.memoryTotal ?? 0, `${fmtBytes(used)} of ${fmtBytes(d.memoryTotal)} used`), ` ${fmtBytes(used)} / ${fmtBytes(d.memoryTotal)}`),
    ];
  });
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
