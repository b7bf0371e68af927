// Devices tab: the served models (state, pinned, memory estimate and what each holds per device,
// use), memory per device and replica with what the fit planned there (the plan, KV per slot, what
// stays free), what each replica's fit to memory decided, layers placed, engine epochs and restarts.
import type { FitView } from '../../contract/devices.js';
import type { ViewState } from '../state.js';
import { empty, fmtBytes, fmtDate, h, table } from '../dom.js';
import { memoryCell } from './memory.js';

const FIT_WORDS: Record<FitView['status'], string> = { fits: 'fits', adjusted: 'fitted', does_not_fit: 'does not fit' };

function fitBlock(f: FitView): HTMLElement {
  return h('div', { class: 'fit', 'aria-label': `Fit of replica ${f.replica}` },
    h('p', {},
      h('span', { class: `badge ${f.status === 'does_not_fit' ? 'state-failed' : 'state-ok'}` }, FIT_WORDS[f.status]),
      ` replica ${f.replica}: ${f.summary}`),
    f.changes.length ? h('ul', {}, ...f.changes.map((c) => h('li', {}, c))) : null,
    f.reason ? h('p', { class: f.status === 'does_not_fit' ? 'error' : 'muted' }, f.reason) : null,
    f.suggestions.length ? h('p', {}, `Every layer on the GPU with: ${f.suggestions.join(' · ')}`) : null);
}

export function renderDevices(s: ViewState): HTMLElement {
  const engines = s.metrics?.engines ?? [];
  const planned = s.devices.some((d) => d.planned !== null);
  const devRows = s.devices.map((d) => [
    d.name, d.description || '–', d.type || '–', d.replica === null ? '–' : String(d.replica),
    d.layers === null ? '–' : String(d.layers), memoryCell(d),
    ...(planned ? [
      d.planned ? fmtBytes(d.planned.bytes) : '–', d.planned ? fmtBytes(d.planned.kvPerSlot) : '–',
      d.planned ? h('span', { class: d.planned.margin < 0 ? 'error' : '' }, d.planned.margin < 0 ? `−${fmtBytes(-d.planned.margin)}` : fmtBytes(d.planned.margin)) : '–',
    ] : []),
  ]);
  const engRows = engines.map((e) => [
    String(e.replica), h('span', { class: `badge ${e.alive ? 'state-ok' : 'state-failed'}` }, e.alive ? 'alive' : 'down'),
    String(e.epoch), e.pid === null ? '–' : String(e.pid), String(e.restarts), e.devices.join(', ') || '–',
  ]);
  const models = s.metrics?.models ?? [];
  const modelRows = models.map((m) => [
    m.name, m.role ?? '–', h('span', { class: `badge state-${m.state}`, title: m.error ?? '' }, m.state), m.pinned ? 'pinned' : '–',
    fmtBytes(m.memoryBytes), Object.entries(m.deviceMemory).map(([d, b]) => `${d} ${fmtBytes(b)}`).join(', ') || '–',
    String(m.inFlight), String(m.requests), fmtDate(m.lastUsed),
  ]);
  const deviceHead = ['Device', 'Description', 'Type', 'Replica', 'Layers', 'Memory', ...(planned ? ['Planned', 'KV / slot', 'Free after'] : [])];
  return h('div', {},
    models.length > 1 ? h('h2', {}, 'Models') : null,
    models.length > 1
      ? table(['Model', 'Role', 'State', 'Pinned', 'Memory (est.)', 'On devices', 'In flight', 'Requests', 'Last used'], modelRows, { class: 'grid', 'aria-label': 'Models' })
      : null,
    h('h2', {}, 'Devices'),
    s.devicesError ? h('p', { class: 'error' }, s.devicesError)
      : devRows.length ? table(deviceHead, devRows, { class: 'grid', 'aria-label': 'Devices' }) : empty('No devices reported yet.'),
    s.fit.length ? h('h2', {}, 'Fit to memory') : null,
    ...s.fit.map(fitBlock),
    h('h2', {}, 'Engines'),
    engRows.length ? table(['Replica', 'State', 'Epoch', 'PID', 'Restarts', 'Devices'], engRows, { class: 'grid', 'aria-label': 'Engines' }) : empty('No engine information yet.'));
}
